/// A value decoded by `PERDecoder`: the generic tree that every schema decodes into.
///
/// Names are not repeated in the tree: a SEQUENCE value points at its `PERSequence`, which holds them once,
/// and CHOICE and ENUMERATED values carry indexes that their types name.
public enum PERValue: Sendable {
    /// A BOOLEAN.
    case boolean(Bool)
    /// An INTEGER that fits 64 bits.
    case integer(Int)
    /// An unconstrained INTEGER longer than 8 octets: its minimal two's-complement bytes, big-endian.
    case bigInteger([UInt8])
    /// An ENUMERATED value's index; an index past the root names is an extension value of a newer schema.
    case enumerated(Int)
    /// An IA5String or UTF8String.
    case text(String)
    /// An OCTET STRING.
    case octets([UInt8])
    /// A BIT STRING: its bits packed most significant first, and how many there are.
    case bits([UInt8], count: Int)
    /// NULL.
    case null
    /// An OBJECT IDENTIFIER: its arcs, e.g. `[1, 2, 840, 10045, 4, 3, 2]`.
    case objectIdentifier([Int])
    /// A SEQUENCE.
    case sequence(PERRecord)
    /// A CHOICE: the alternative's index and value. An extension alternative this schema does not know has
    /// its open-type bytes as `.octets`.
    indirect case choice(index: Int, PERValue)
    /// A SEQUENCE OF.
    case list([PERValue])

    /// The SEQUENCE, if this is one.
    public var record: PERRecord? {
        if case .sequence(let record) = self { return record }
        return nil
    }

    /// The INTEGER, if this is one that fits 64 bits.
    public var integer: Int? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The text of an IA5String or UTF8String.
    public var text: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    /// The BOOLEAN.
    public var boolean: Bool? {
        if case .boolean(let value) = self { return value }
        return nil
    }

    /// The index of an ENUMERATED value.
    public var enumeratedIndex: Int? {
        if case .enumerated(let value) = self { return value }
        return nil
    }

    /// The items of a SEQUENCE OF (empty for anything else).
    public var items: [PERValue] {
        if case .list(let values) = self { return values }
        return []
    }

    /// An OBJECT IDENTIFIER in dotted form, e.g. `1.2.840.10045.4.3.2`.
    public var objectIdentifier: String? {
        if case .objectIdentifier(let arcs) = self { return arcs.map(String.init).joined(separator: ".") }
        return nil
    }

    /// The bytes of an OCTET STRING.
    public var octets: [UInt8]? {
        if case .octets(let value) = self { return value }
        return nil
    }
}

/// A decoded SEQUENCE: its type and one slot per component (root, then the additions the schema knows).
///
/// A slot is `nil` when the component was not on the wire; reading it by name or index gives the DEFAULT
/// value for such a component, so `isPresent(at:)` tells a stated value from a default.
public struct PERRecord: Sendable {
    /// The SEQUENCE type, which names the slots.
    public let type: PERSequence
    /// The values on the wire by component index (`type.component(at:)`); `nil` for absent components.
    public var values: PERSlots
    /// How many extension additions were present but unknown to the schema (decoded by skipping them).
    public var unknownAdditions: Int

    /// A record of `type` with every slot empty.
    init(type: PERSequence) {
        self.type = type
        values = PERSlots(count: type.slotCount)
        unknownAdditions = 0
    }

    /// The value of the component called `name`: as encoded, else its DEFAULT, else `nil`.
    public subscript(_ name: String) -> PERValue? {
        guard let index = type.index(of: name) else { return nil }
        return value(at: index)
    }

    /// The value at component `index`: as encoded, else its DEFAULT, else `nil`.
    public func value(at index: Int) -> PERValue? {
        values[index] ?? type.defaults[index]
    }

    /// Whether component `index` was on the wire (a DEFAULT component that was not reads as its default).
    public func isPresent(at index: Int) -> Bool { values[index] != nil }
}

/// The slots of a decoded record: a fixed number of optional values, indexed from 0, shared by copies until one
/// of them changes a slot.
///
/// An `Array<PERValue?>` would do, but on this platform every new array of a type the standard library does not
/// know looks its storage class up in the runtime's generic-metadata table, and a record is made for every
/// SEQUENCE decoded (a fifth of an FCB decode went to those look-ups). This storage is a class of its own, whose
/// metadata is made once.
///
/// `@unchecked Sendable`: the storage (a `ManagedBuffer`, which is not `Sendable`) is only written while uniquely
/// referenced (see `subscript`'s setter), so copies on other threads never see a change.
public struct PERSlots: RandomAccessCollection, MutableCollection, @unchecked Sendable {
    /// The slot count as header, then the slots.
    final class Storage: ManagedBuffer<Int, PERValue?> {
        deinit {
            _ = withUnsafeMutablePointers { count, slots in slots.deinitialize(count: count.pointee) }
        }

        /// A storage of `count` slots, each made by `slot`.
        static func make(count: Int, _ slot: (Int) -> PERValue?) -> Storage {
            let storage = unsafeDowncast(create(minimumCapacity: count) { _ in count }, to: Storage.self)
            storage.withUnsafeMutablePointerToElements { slots in
                for index in 0..<count { (slots + index).initialize(to: slot(index)) }
            }
            return storage
        }
    }

    private var storage: Storage
    /// The number of slots, kept beside the storage: reading a class's property is checked for exclusive
    /// access at run time, on every subscript.
    private let slotCount: Int

    /// `count` empty slots.
    init(count: Int) {
        storage = Storage.make(count: count) { _ in nil }
        slotCount = count
    }

    /// 0.
    public var startIndex: Int { 0 }

    /// The number of slots.
    public var endIndex: Int { slotCount }

    /// The value in slot `index`, `nil` when empty.
    public subscript(index: Int) -> PERValue? {
        get {
            precondition(index >= 0 && index < endIndex, "slot \(index) of \(endIndex)")
            return storage.withUnsafeMutablePointerToElements { $0[index] }
        }
        set {
            precondition(index >= 0 && index < endIndex, "slot \(index) of \(endIndex)")
            if !isKnownUniquelyReferenced(&storage) {
                let old = storage
                storage = old.withUnsafeMutablePointerToElements { slots in
                    Storage.make(count: slotCount) { slots[$0] }
                }
            }
            storage.withUnsafeMutablePointerToElements { $0[index] = newValue }
        }
    }
}

extension PERRecord {
    /// The value at a component position resolved beforehand with `PERSequence.index(of:)`: as encoded, else its
    /// DEFAULT; `nil` when the position is `nil` (the type has no such component) or the slot is empty.
    ///
    /// Readers that map many records of one type resolve the names once per type and read by position: a name
    /// lookup hashes and compares the name for every field of every record.
    public subscript(position position: Int?) -> PERValue? {
        guard let position else { return nil }
        return value(at: position)
    }
}
