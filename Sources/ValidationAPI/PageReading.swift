import Foundation

/// A signed page read entry by entry: its own fields strictly, each entry on its own.
///
/// A page's signature is checked once for the whole page; then one entry the validator cannot read (a date outside
/// years 1-9999, a ticket id that is not hex, a missing field) is set aside instead of refusing the page, so that a
/// single bad entry signed into a page does not stop every later page from being applied. The page's own fields
/// (`since`, `next`, `from`, `more`, ...) are still read strictly: a page whose cursor cannot be read is refused.
public struct PageReading<Page: Sendable>: Sendable {
    /// The page, with the entries that could be read.
    public var page: Page
    /// The entries that could not be read, in the page's order.
    public var skipped: [SkippedEntry]

    /// Makes a reading.
    public init(page: Page, skipped: [SkippedEntry]) {
        self.page = page
        self.skipped = skipped
    }
}

/// An entry of a signed page that could not be read, and was skipped.
public struct SkippedEntry: Sendable, Equatable, CustomStringConvertible {
    /// The page's member that holds it, as on the wire (`entries`, `withdrawals`, `addedTickets`, ...).
    public var list: String
    /// Its position in that list, from 0.
    public var index: Int
    /// Why it could not be read.
    public var reason: String

    /// Makes a record of a skipped entry.
    public init(list: String, index: Int, reason: String) {
        self.list = list
        self.index = index
        self.reason = reason
    }

    /// `addedTickets[3]: <reason>`, for logs.
    public var description: String { "\(list)[\(index)]: \(reason)" }
}

extension SignedDocument {
    /// Checks the signature with the pinned anchors, then reads the payload as a first-use page, each entry and
    /// withdrawal on its own (see `PageReading`).
    ///
    /// - Throws: `BundleError` as `verifiedPayload(trusting:)` does, and `.undecodablePayload` when the page's own
    ///   fields (`since`, `next`, `more`, `issuedAt`, the lists themselves) cannot be read.
    public func openFirstUsePage(trusting anchors: [TrustAnchor]) throws(BundleError) -> PageReading<FirstUseDelta> {
        let bytes = try verifiedPayload(trusting: anchors)
        do {
            return try FirstUseDelta.reading(wireBytes: bytes)
        } catch {
            throw BundleError(
                code: .undecodablePayload,
                message: "The signed payload is not a FirstUseDelta document (\(Self.reason(error))); refused.",
                cause: error)
        }
    }

    /// Checks the signature with the pinned anchors, then reads the payload as a revocation page with
    /// `RevocationDelta(wireBytes:)`'s reader, each entry on its own (see `PageReading`).
    ///
    /// - Throws: `BundleError` as `verifiedPayload(trusting:)` does, and `.undecodablePayload` when the page is not
    ///   JSON, or its own fields (`from`, `next`, `full`, `more`, `issuedAt`, `blocklists`, the lists themselves)
    ///   cannot be read.
    public func openRevocationPage(trusting anchors: [TrustAnchor]) throws(BundleError) -> PageReading<
        RevocationDelta
    > {
        let bytes = try verifiedPayload(trusting: anchors)
        do {
            return try RevocationDelta.reading(wireBytes: bytes)
        } catch {
            throw BundleError(
                code: .undecodablePayload,
                message: "The signed payload is not a RevocationDelta document (\(error)); refused.",
                cause: error)
        }
    }

    /// A decoding error in a sentence: what was wrong, and where.
    static func reason(_ error: any Error) -> String {
        func path(_ codingPath: [any CodingKey]) -> String {
            codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        }
        switch error {
        case DecodingError.dataCorrupted(let context):
            return "\(context.debugDescription) at \(path(context.codingPath))"
        case DecodingError.keyNotFound(let key, let context):
            return "no \(key.stringValue) at \(path(context.codingPath))"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            return "\(context.debugDescription) at \(path(context.codingPath))"
        default:
            return "\(error)"
        }
    }
}

extension FirstUseDelta {
    /// Reads a first-use page from the JSON bytes of a signed payload, each entry and withdrawal on its own (see
    /// `PageReading`): one that cannot be read is left out and named in the reading's `skipped`.
    ///
    /// - Throws: The decoding error when the bytes are not JSON, or the page's own fields (`since`, `next`, `more`,
    ///   `issuedAt`, the lists themselves) cannot be read.
    public static func reading(wireBytes: [UInt8]) throws -> PageReading<FirstUseDelta> {
        let page = try WireFormat.decode(TolerantFirstUseDelta.self, from: wireBytes)
        var skipped: [SkippedEntry] = []
        func taken<Entry>(_ list: [Tolerant<Entry>], named name: String) -> [Entry] {
            list.enumerated().compactMap { index, entry in
                switch entry.value {
                case .success(let value):
                    return value
                case .failure(let error):
                    skipped.append(SkippedEntry(list: name, index: index, reason: SignedDocument.reason(error)))
                    return nil
                }
            }
        }
        let entries = taken(page.entries, named: "entries")
        let withdrawals = page.withdrawals.map { taken($0, named: "withdrawals") }
        return PageReading(
            page: FirstUseDelta(
                since: page.since, next: page.next, entries: entries, more: page.more, issuedAt: page.issuedAt,
                withdrawals: withdrawals),
            skipped: skipped)
    }
}

/// An element of a list read on its own: its value, or why it could not be read. Reading one never fails, so the
/// list around it is read to its end.
struct Tolerant<Value: Decodable>: Decodable {
    var value: Result<Value, any Error>

    init(from decoder: any Decoder) throws {
        do {
            value = .success(try Value(from: decoder))
        } catch {
            value = .failure(error)
        }
    }
}

/// A first-use page whose own fields are read strictly and whose entries are read each on its own.
private struct TolerantFirstUseDelta: Decodable {
    var since: Int64
    var next: Int64
    var entries: [Tolerant<FleetFirstUse>]
    var more: Bool
    var issuedAt: Date?
    var withdrawals: [Tolerant<FirstUseWithdrawal>]?

    private enum CodingKeys: String, CodingKey {
        case since, next, entries, more, issuedAt, withdrawals
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        since = try container.decode(Int64.self, forKey: .since)
        next = try container.decode(Int64.self, forKey: .next)
        entries = try container.decode([Tolerant<FleetFirstUse>].self, forKey: .entries)
        more = try container.decode(Bool.self, forKey: .more)
        issuedAt = try container.decodeIfPresent(Date.self, forKey: .issuedAt)
        withdrawals = try container.decodeIfPresent([Tolerant<FirstUseWithdrawal>].self, forKey: .withdrawals)
    }
}
