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
    public var values: [PERValue?]
    /// How many extension additions were present but unknown to the schema (decoded by skipping them).
    public var unknownAdditions: Int

    /// A record of `type` with every slot empty.
    init(type: PERSequence) {
        self.type = type
        values = Array(repeating: nil, count: type.slotCount)
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
