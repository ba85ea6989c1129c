/// A value decoded by `PERDecoder`: the generic tree that every schema decodes into.
///
/// Names are not repeated in the tree: a SEQUENCE value points at its `PERSequence`, which holds them once,
/// and CHOICE and ENUMERATED values carry indexes that their types name.
public indirect enum PERValue: Sendable {
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
    case choice(index: Int, PERValue)
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
/// An absent OPTIONAL is `nil`; an absent DEFAULT holds its default value (`explicit` tells them apart).
public struct PERRecord: Sendable {
    /// The SEQUENCE type, which names the slots.
    public let type: PERSequence
    /// The values by component index (`type.component(at:)`).
    public var values: [PERValue?]
    /// Which slots were present on the wire (a DEFAULT slot that is not holds the default).
    public var explicit: [Bool]
    /// How many extension additions were present but unknown to the schema (decoded by skipping them).
    public var unknownAdditions: Int

    /// A record of `type` with every slot empty.
    init(type: PERSequence) {
        self.type = type
        let count = type.components.count + type.additions.count
        values = Array(repeating: nil, count: count)
        explicit = Array(repeating: false, count: count)
        unknownAdditions = 0
    }

    /// The value of the component called `name`, when present (or defaulted).
    public subscript(_ name: String) -> PERValue? {
        guard let index = type.index(of: name) else { return nil }
        return values[index]
    }
}
