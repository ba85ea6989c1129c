/// A small, tolerant reader for the XML of the UIC key list: elements, text, entities, CDATA.
///
/// The key list is a flat document of a few hundred kilobytes. This reader builds the element tree
/// without a dependency on libxml2 (FoundationXML), ignores attributes, namespaces, comments,
/// processing instructions and the document type, and fails only where the document cannot be read
/// at all: an unterminated tag, comment or CDATA section, a document that ends with elements still
/// open (a truncated download must not pass for a shorter list), or no root element.
enum UICXMLReader {
    /// An element: its local name, where its start tag is, its own text and its child elements.
    struct Element: Sendable {
        var name: String
        var offset: Int
        var textBytes: [UInt8] = []
        var children: [Element] = []

        /// The element's own text (not its children's), UTF-8 decoded.
        var text: String { String(decoding: textBytes, as: UTF8.self) }
    }

    /// Reads a document and returns its root element.
    static func parse(_ bytes: [UInt8]) throws(FormatError) -> Element {
        var stack: [Element] = []
        var root: Element?
        var index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0

        func close(_ element: Element) {
            if stack.isEmpty {
                if root == nil { root = element }
            } else {
                stack[stack.count - 1].children.append(element)
            }
        }

        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "<") else {
                let end = bytes[index...].firstIndex(of: UInt8(ascii: "<")) ?? bytes.count
                if !stack.isEmpty { stack[stack.count - 1].textBytes += decodeEntities(bytes[index..<end]) }
                index = end
                continue
            }
            let start = index
            if bytes[index...].starts(with: Array("<!--".utf8)) {
                index = try skip(past: "-->", in: bytes, from: start + 4, what: "comment", start: start)
            } else if bytes[index...].starts(with: Array("<![CDATA[".utf8)) {
                let end = try skip(past: "]]>", in: bytes, from: start + 9, what: "CDATA section", start: start)
                if !stack.isEmpty { stack[stack.count - 1].textBytes += bytes[(start + 9)..<(end - 3)] }
                index = end
            } else if bytes[index...].starts(with: Array("<?".utf8)) {
                index = try skip(past: "?>", in: bytes, from: start + 2, what: "processing instruction", start: start)
            } else if bytes[index...].starts(with: Array("<!".utf8)) {
                index = try skipDeclaration(bytes, from: start)
            } else {
                let end = try tagEnd(bytes, from: start)
                index = end
                var inner = bytes[(start + 1)..<(end - 1)]
                let isEnd = inner.first == UInt8(ascii: "/")
                let isEmpty = !isEnd && inner.last == UInt8(ascii: "/")
                if isEnd { inner = inner.dropFirst() }
                if isEmpty { inner = inner.dropLast() }
                let nameBytes = inner.prefix { !isSpace($0) }
                guard !nameBytes.isEmpty else {
                    throw .malformed("the XML tag at byte \(start) has no name")
                }
                var name = String(decoding: nameBytes, as: UTF8.self)
                if let colon = name.lastIndex(of: ":") { name = String(name[name.index(after: colon)...]) }
                if isEnd {
                    // Tolerant: an end tag closes the innermost open element of its name, and those inside it.
                    guard let match = stack.lastIndex(where: { $0.name == name }) else { continue }
                    while stack.count > match {
                        close(stack.removeLast())
                    }
                } else if isEmpty {
                    close(Element(name: name, offset: start))
                } else {
                    stack.append(Element(name: name, offset: start))
                }
            }
        }
        if let open = stack.last {
            throw .malformed(
                "the XML document ends at byte \(bytes.count) with <\(open.name)> from byte \(open.offset) still open"
            )
        }
        guard let root else { throw .malformed("the XML document of \(bytes.count) bytes has no root element") }
        return root
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// The index after `terminator`, searching from `index`.
    private static func skip(
        past terminator: String, in bytes: [UInt8], from index: Int, what: String, start: Int
    ) throws(FormatError) -> Int {
        let pattern = Array(terminator.utf8)
        var position = index
        while position + pattern.count <= bytes.count {
            if bytes[position] == pattern[0], bytes[position..<(position + pattern.count)].elementsEqual(pattern) {
                return position + pattern.count
            }
            position += 1
        }
        throw .malformed("the XML \(what) at byte \(start) is not terminated")
    }

    /// The index after the `>` that ends the tag at `start`, skipping quoted attribute values.
    private static func tagEnd(_ bytes: [UInt8], from start: Int) throws(FormatError) -> Int {
        var quote: UInt8?
        var position = start + 1
        while position < bytes.count {
            let byte = bytes[position]
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: ">") {
                return position + 1
            } else if byte == UInt8(ascii: "<") {
                break
            }
            position += 1
        }
        throw .malformed("the XML tag at byte \(start) is not terminated")
    }

    /// Skips `<!DOCTYPE …>`, including an internal subset in brackets.
    private static func skipDeclaration(_ bytes: [UInt8], from start: Int) throws(FormatError) -> Int {
        var depth = 0
        var position = start + 2
        while position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "]"): depth -= 1
            case UInt8(ascii: ">") where depth <= 0: return position + 1
            default: break
            }
            position += 1
        }
        throw .malformed("the XML declaration at byte \(start) is not terminated")
    }

    /// Text with the predefined entities and character references replaced; unknown ones are kept.
    static func decodeEntities(_ text: ArraySlice<UInt8>) -> [UInt8] {
        guard text.contains(UInt8(ascii: "&")) else { return Array(text) }
        var out: [UInt8] = []
        out.reserveCapacity(text.count)
        var index = text.startIndex
        while index < text.endIndex {
            let byte = text[index]
            guard byte == UInt8(ascii: "&"),
                let semicolon = text[index...].prefix(12).firstIndex(of: UInt8(ascii: ";"))
            else {
                out.append(byte)
                index += 1
                continue
            }
            let name = String(decoding: text[(index + 1)..<semicolon], as: UTF8.self)
            if let replacement = entity(name) {
                out += replacement
                index = semicolon + 1
            } else {
                out.append(byte)
                index += 1
            }
        }
        return out
    }

    private static func entity(_ name: String) -> [UInt8]? {
        switch name {
        case "lt": return [UInt8(ascii: "<")]
        case "gt": return [UInt8(ascii: ">")]
        case "amp": return [UInt8(ascii: "&")]
        case "quot": return [UInt8(ascii: "\"")]
        case "apos": return [UInt8(ascii: "'")]
        default: break
        }
        let code: UInt32?
        if name.hasPrefix("#x") || name.hasPrefix("#X") {
            code = UInt32(name.dropFirst(2), radix: 16)
        } else if name.hasPrefix("#") {
            code = UInt32(name.dropFirst(), radix: 10)
        } else {
            code = nil
        }
        guard let code, let scalar = Unicode.Scalar(code) else { return nil }
        return Array(String(Character(scalar)).utf8)
    }
}
