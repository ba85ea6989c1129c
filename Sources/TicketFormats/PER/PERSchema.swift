/// A type of an ASN.1 module as the unaligned PER decoder (`PERDecoder`) reads it.
///
/// Schemas are data: each version of a module (FCB v1.3, v2, v3, …) is a tree of these values declared in
/// Swift, and one decoder interprets any of them. Only what the UIC modules use is here; a constraint that
/// PER ignores (permitted alphabets, `WITH COMPONENTS`) has no place.
public enum PERType: Sendable {
    /// `BOOLEAN`: one bit.
    case boolean
    /// `NULL`: no bits.
    case null
    /// `INTEGER (lb..ub)`: `value − lb` in the fewest bits that hold `ub − lb` (0 bits when lb = ub).
    case integer(Int, Int)
    /// `INTEGER` without a range: a length in octets, then two's complement.
    case unconstrainedInteger
    /// `ENUMERATED`.
    case enumerated(PEREnumeration)
    /// `IA5String`, 7 bits a character, with an optional `SIZE`.
    case ia5String(PERSize?)
    /// `UTF8String`: a length determinant in octets and the UTF-8 bytes (a SIZE is kept as declared but is not
    /// PER-visible, so the decoder ignores it).
    case utf8String(PERSize?)
    /// `OCTET STRING`.
    case octetString(PERSize?)
    /// `BIT STRING`.
    case bitString(PERSize?)
    /// `OBJECT IDENTIFIER`: a length in octets and the BER contents (DOSIPAS algorithm ids).
    case objectIdentifier
    /// `SEQUENCE { … }`.
    case sequence(PERSequence)
    /// `CHOICE { … }`.
    case choice(PERChoice)
    /// `SEQUENCE OF` an item type, with an optional `SIZE`.
    indirect case sequenceOf(PERType, PERSize?)
    /// A type that contains itself (FCB's `ViaStationType`), reached through a reference resolved when
    /// decoding: a tree of values cannot hold itself.
    case recursive(PERRecursion)
}

/// A reference to a type by a closure, for types that contain themselves.
public final class PERRecursion: Sendable {
    /// The referenced type's name, for messages.
    public let name: String
    /// Gives the referenced type.
    public let resolve: @Sendable () -> PERType

    /// A reference, e.g. `PERRecursion("ViaStationType") { viaStationType }`.
    public init(_ name: String, _ resolve: @escaping @Sendable () -> PERType) {
        self.name = name
        self.resolve = resolve
    }
}

/// A `SIZE(lb..ub)` constraint (`ub` `nil` for `MAX`); `SIZE(n)` is `PERSize(n, n)`.
public struct PERSize: Sendable, Hashable {
    /// The smallest size.
    public let lowerBound: Int
    /// The largest size; `nil` when unbounded.
    public let upperBound: Int?

    /// A size constraint, e.g. `PERSize(3, 3)` for `SIZE(3)`.
    public init(_ lowerBound: Int, _ upperBound: Int?) {
        self.lowerBound = lowerBound
        self.upperBound = upperBound
    }

    /// Whether PER writes the length as a constrained number of `bits` (instead of a length determinant):
    /// an upper bound below 64K (X.691 11.9.3.3; no length at all when lb = ub).
    var constrainedWidth: Int? {
        guard let upperBound, upperBound < 65_536, upperBound >= lowerBound else { return nil }
        return PERSize.bitWidth(UInt64(upperBound - lowerBound))
    }

    /// The number of bits that hold `0...span`: 0 for 0, 1 for 1, 2 for 2…3, …
    static func bitWidth(_ span: UInt64) -> Int {
        span == 0 ? 0 : 64 - span.leadingZeroBitCount
    }
}

/// Whether a component of a SEQUENCE must be there, may be left out, or stands for a default when left out.
public enum PERPresence: Sendable {
    /// Always encoded.
    case required
    /// `OPTIONAL`: one bit of the presence bitmap.
    case optional
    /// `DEFAULT value`: one bit of the presence bitmap; absent means `value`.
    case defaulted(PERValue)
}

/// A named component of a SEQUENCE, or an alternative of a CHOICE.
public struct PERComponent: Sendable {
    /// The component's name in the module, e.g. `validFromDay`.
    public let name: String
    /// Its type.
    public let type: PERType
    /// Required, optional or defaulted (always `required` for CHOICE alternatives).
    public let presence: PERPresence

    /// A component, e.g. `PERComponent("validFromDay", .integer(-367, 700), .defaulted(.integer(0)))`.
    public init(_ name: String, _ type: PERType, _ presence: PERPresence = .required) {
        self.name = name
        self.type = type
        self.presence = presence
    }

    /// Whether the component has a bit in the presence bitmap.
    var hasPresenceBit: Bool {
        if case .required = presence { return false }
        return true
    }
}

/// A `SEQUENCE` type: its root components, whether it has an extension marker, and the extension additions
/// this schema knows.
///
/// A class so that the decoded values can point at their type (for names) without copying it.
public final class PERSequence: Sendable {
    /// The type's name in the module, e.g. `OpenTicketData`.
    public let name: String
    /// Whether the type has `...`.
    public let isExtensible: Bool
    /// The root components, in order.
    public let components: [PERComponent]
    /// The extension additions known to this schema, in order (each one an open type on the wire).
    public let additions: [PERComponent]
    /// How many root components have a presence bit.
    let presenceBitCount: Int
    /// The number of slots of a decoded record: root components plus known additions.
    let slotCount: Int
    /// The DEFAULT value of each slot, `nil` where there is none.
    let defaults: [PERValue?]
    /// Whether each root component has a presence bit, by index (read in the hot loop without copying
    /// components).
    let presenceBits: [Bool]
    /// The type of each slot, by index.
    let slotTypes: [PERType]
    /// Component index by name, for lookups by the typed models (root first, then additions).
    private let indexByName: PERNameIndex

    /// A SEQUENCE type.
    public init(_ name: String, extensible: Bool, _ components: [PERComponent], additions: [PERComponent] = []) {
        self.name = name
        isExtensible = extensible
        self.components = components
        self.additions = additions
        presenceBitCount = components.reduce(0) { $0 + ($1.hasPresenceBit ? 1 : 0) }
        let all = components + additions
        slotCount = all.count
        defaults = all.map { component in
            if case .defaulted(let value) = component.presence { return value }
            return nil
        }
        presenceBits = components.map(\.hasPresenceBit)
        slotTypes = all.map(\.type)
        indexByName = PERNameIndex(all.map(\.name))
    }

    /// The position of the component called `name` among root components then additions.
    public func index(of name: String) -> Int? { indexByName.index(of: name) }

    /// The component at `index` (root components, then additions).
    public func component(at index: Int) -> PERComponent {
        index < components.count ? components[index] : additions[index - components.count]
    }
}

/// A `CHOICE` type: its root alternatives and whether it has an extension marker.
public final class PERChoice: Sendable {
    /// The type's name in the module (inline choices are named after their place, e.g. `DocumentDataTicket`).
    public let name: String
    /// Whether the type has `...`.
    public let isExtensible: Bool
    /// The root alternatives, in order.
    public let alternatives: [PERComponent]
    /// The extension alternatives known to this schema.
    public let additions: [PERComponent]

    /// A CHOICE type.
    public init(_ name: String, extensible: Bool, _ alternatives: [PERComponent], additions: [PERComponent] = []) {
        self.name = name
        isExtensible = extensible
        self.alternatives = alternatives
        self.additions = additions
    }

    /// The alternative at `index` (root, then extension alternatives), when the schema knows it.
    public func alternative(at index: Int) -> PERComponent? {
        if index < alternatives.count { return alternatives[index] }
        let extra = index - alternatives.count
        return extra < additions.count ? additions[extra] : nil
    }
}

/// An `ENUMERATED` type: the names of its root values in index order, and whether it has `...`.
public final class PEREnumeration: Sendable {
    /// The type's name in the module, e.g. `TravelClassType`.
    public let name: String
    /// The names of the root values by index (the UIC modules number them 0, 1, 2… in order).
    public let names: [String]
    /// Whether the type has `...`.
    public let isExtensible: Bool

    /// An ENUMERATED type.
    public init(_ name: String, _ names: [String], extensible: Bool) {
        self.name = name
        self.names = names
        isExtensible = extensible
    }

    /// The name of the value at `index`, or `nil` for an extension value this schema does not know.
    public func name(at index: Int) -> String? {
        index >= 0 && index < names.count ? names[index] : nil
    }
}

/// Component positions by name: a small open-addressing table over FNV-1a hashes of the names.
///
/// The typed models look fields up by name about a hundred times per FCB ticket; `Dictionary<String, Int>`
/// pays a seeded SipHash for each, which was a fifth of the whole decode. Names are short ASCII identifiers,
/// so FNV-1a over their bytes is cheap and spreads them well enough for tables of a few dozen entries.
struct PERNameIndex: Sendable {
    private let names: [String]
    /// For each slot, the position of a name plus one; 0 for an empty slot.
    private let slots: [Int32]
    /// For each slot, the full hash of its name: a name that is not there (most lookups of the optional fields
    /// of another version, or of the other form of a `…Num`/`…IA5` pair) is told apart without comparing
    /// strings.
    private let hashes: [Int]
    private let mask: Int

    /// An index of `names`; where a name occurs twice, the first position is found.
    init(_ names: [String]) {
        var capacity = 8
        while capacity < names.count * 2 { capacity *= 2 }
        var slots = [Int32](repeating: 0, count: capacity)
        var hashes = [Int](repeating: 0, count: capacity)
        let mask = capacity - 1
        for (position, name) in names.enumerated() {
            let hash = Self.hash(name)
            var slot = hash & mask
            var duplicate = false
            while slots[slot] != 0 {
                if names[Int(slots[slot]) - 1] == name {
                    duplicate = true
                    break
                }
                slot = (slot + 1) & mask
            }
            if !duplicate {
                slots[slot] = Int32(position + 1)
                hashes[slot] = hash
            }
        }
        self.names = names
        self.slots = slots
        self.hashes = hashes
        self.mask = mask
    }

    /// The first position of `name`, or `nil`.
    func index(of name: String) -> Int? {
        let hash = Self.hash(name)
        var slot = hash & mask
        while true {
            let entry = Int(slots[slot])
            if entry == 0 { return nil }
            if hashes[slot] == hash, names[entry - 1] == name { return entry - 1 }
            slot = (slot + 1) & mask
        }
    }

    private static func hash(_ name: String) -> Int {
        // Through the contiguous bytes (native strings, small or not, have them): iterating `utf8` one
        // element at a time costs several times more.
        name.utf8.withContiguousStorageIfAvailable(hash(bytes:))
            ?? Array(name.utf8).withUnsafeBufferPointer(hash(bytes:))
    }

    /// Eight bytes a step, each step a multiply: names are 5 to 30 bytes, and a byte a step (FNV-1a) made
    /// the hash most of a lookup's cost.
    private static func hash(bytes: UnsafeBufferPointer<UInt8>) -> Int {
        let count = bytes.count
        var hash = UInt64(truncatingIfNeeded: count) &* 0x9E37_79B9_7F4A_7C15
        guard let base = bytes.baseAddress, count > 0 else { return Int(truncatingIfNeeded: hash) }
        let raw = UnsafeRawPointer(base)
        var index = 0
        while index &+ 8 <= count {
            hash = (hash ^ raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)) &* 0xFF51_AFD7_ED55_8CCD
            hash ^= hash >> 32
            index &+= 8
        }
        var tail: UInt64 = 0
        while index < count {
            tail = tail << 8 | UInt64(base[index])
            index &+= 1
        }
        hash = (hash ^ tail) &* 0xC4CE_B9FE_1A85_EC53
        return Int(truncatingIfNeeded: hash ^ (hash >> 29))
    }
}

extension PERType {
    /// The SEQUENCE this type is, or that the items of a SEQUENCE OF are (through recursion): what a record of
    /// this component, or each item of it, points at. `nil` for any other type.
    public var recordSequence: PERSequence? {
        switch self {
        case .sequence(let sequence): sequence
        case .sequenceOf(let item, _): item.recordSequence
        case .recursive(let recursion): recursion.resolve().recordSequence
        default: nil
        }
    }
}

extension PERSequence {
    /// The SEQUENCE of the component called `name` (or of its items, for a SEQUENCE OF); `nil` when there is no
    /// such component or it holds no SEQUENCE.
    public func componentSequence(_ name: String) -> PERSequence? {
        index(of: name).flatMap { slotTypes[$0].recordSequence }
    }

    /// The CHOICE of the component called `name`; `nil` when there is no such component or it is no CHOICE.
    public func componentChoice(_ name: String) -> PERChoice? {
        guard let index = index(of: name), case .choice(let choice) = slotTypes[index] else { return nil }
        return choice
    }
}
