import FareCore
import Foundation
import TestSupport
import Testing
import TrustSources

/// One fetch from a publisher on loopback, over HTTPS, and each way a publisher fails: what the operator of the
/// reference server would notice (the bytes and validators kept, a 304, an error naming what went wrong, no hang).
@Suite("Fetching from a trust publisher", .timeLimit(.minutes(1)))
struct PublisherFetcherTests {
    static let keyList = Array("<keys><key id=\"1\"/></keys>".utf8)
    /// Short, but not so short that a loaded machine fails a fetch that should pass (the timeout tests set their own).
    static let short = FetchLimits(maximumBodyBytes: 1 << 20, headTimeout: .seconds(3), bodyTimeout: .seconds(3))

    /// A publisher serving the key list at `/download.php`, and a fetcher trusting its CA.
    static func publisher() async throws -> (LoopbackPublisher, PublisherFetcher) {
        let publisher = try await LoopbackPublisher.start()
        publisher.serve("/download.php", keyList, contentType: "application/xml")
        return (publisher, PublisherFetcher(trust: .pinnedCA(path: publisher.pki.caCertificate)))
    }

    /// The error a fetch throws, failing the test when it succeeds.
    static func failure(_ fetch: () async throws(FetchError) -> FetchOutcome) async -> FetchError? {
        do {
            let outcome = try await fetch()
            Issue.record("fetched although it should fail: \(outcome)")
            return nil
        } catch {
            return error
        }
    }

    @Test("A fetch gets the bytes, the ETag and the Last-Modified; with the ETag, the next gets 304")
    func fetchThenNotModified() async throws {
        let (publisher, fetcher) = try await Self.publisher()
        let url = publisher.url("/download.php")
        let first = try await fetcher.fetch(url, limits: Self.short, accepting: ["application/xml", "text/xml"])
        guard case .fetched(let body, let etag, let lastModified, let contentType) = first else {
            Issue.record("not fetched: \(first)")
            return
        }
        #expect(body == Self.keyList)
        #expect(etag == publisher.etag("/download.php") && etag != nil)
        #expect(lastModified == publisher.lastModified("/download.php"))
        #expect(contentType == "application/xml")

        let second = try await fetcher.fetch(url, held: HeldValidators(etag: etag), limits: Self.short)
        #expect(second == .notModified)
        #expect(publisher.requests("/download.php").count == 2)
        #expect(publisher.requests("/download.php").last?.headers["if-none-match"] == etag)

        // A new list at the publisher: the same ETag now fetches it.
        publisher.serve("/download.php", Array("<keys/>".utf8), contentType: "application/xml")
        let third = try await fetcher.fetch(url, held: HeldValidators(etag: etag), limits: Self.short)
        guard case .fetched(let newer, let newTag, _, _) = third else {
            Issue.record("not fetched: \(third)")
            return
        }
        #expect(newer == Array("<keys/>".utf8) && newTag != etag)
    }

    @Test("With the Last-Modified only, the next fetch sends If-Modified-Since and gets 304")
    func lastModifiedNotModified() async throws {
        let (publisher, fetcher) = try await Self.publisher()
        let url = publisher.url("/download.php")
        let held = HeldValidators(lastModified: publisher.lastModified("/download.php"))
        #expect(try await fetcher.fetch(url, held: held, limits: Self.short) == .notModified)
        #expect(publisher.requests("/download.php").last?.headers["if-modified-since"] == held.lastModified)
    }

    @Test("A version file is fetched as trimmed text, capped at 4 KiB")
    func versionFile() async throws {
        let (publisher, fetcher) = try await Self.publisher()
        publisher.serve("/versionuic.txt", text: "{\"blacklistId\": 42}\n")
        #expect(try await fetcher.fetchVersionFile(publisher.url("/versionuic.txt")) == "{\"blacklistId\": 42}")
        publisher.serve("/big.txt", text: String(repeating: "9", count: 5000))
        let error = await Self.failure { () throws(FetchError) in
            _ = try await fetcher.fetchVersionFile(publisher.url("/big.txt"))
            return .notModified
        }
        #expect(error?.code == .tooLarge)
    }

    @Test("500 is an error naming the status and the URL")
    func serverError() async throws {
        let (publisher, fetcher) = try await Self.publisher()
        publisher.fail("/download.php", .status(500))
        let url = publisher.url("/download.php")
        let error = await Self.failure { () throws(FetchError) in try await fetcher.fetch(url, limits: Self.short) }
        #expect(error?.code == .httpStatus)
        #expect(error?.status == 500)
        #expect(error?.message.contains("500") == true && error?.message.contains(url) == true)
    }

    @Test("A head held back past the head timeout fails within it, as a head timeout")
    func headTimeout() async throws {
        let (publisher, fetcher) = try await Self.publisher()
        publisher.fail("/download.php", .holdHead(.seconds(5)))
        let limits = FetchLimits(headTimeout: .milliseconds(300), bodyTimeout: .seconds(5))
        let started = ContinuousClock.now
        let error = await Self.failure { () throws(FetchError) in
            try await fetcher.fetch(publisher.url("/download.php"), limits: limits)
        }
        #expect(error?.code == .headTimeout)
        #expect(ContinuousClock.now - started < .seconds(2))
    }

    @Test("A body that stalls fails within the body timeout, as a body timeout")
    func bodyStall() async throws {
        let (publisher, fetcher) = try await Self.publisher()
        publisher.fail("/download.php", .stallBody(after: 5, for: .seconds(5)))
        let limits = FetchLimits(headTimeout: .seconds(5), bodyTimeout: .milliseconds(300))
        let started = ContinuousClock.now
        let error = await Self.failure { () throws(FetchError) in
            try await fetcher.fetch(publisher.url("/download.php"), limits: limits)
        }
        #expect(error?.code == .bodyTimeout)
        #expect(ContinuousClock.now - started < .seconds(2))
    }

    @Test("A body cut short of its Content-Length is truncated")
    func truncated() async throws {
        let (publisher, fetcher) = try await Self.publisher()
        publisher.fail("/download.php", .truncate(after: 10))
        let error = await Self.failure { () throws(FetchError) in
            try await fetcher.fetch(publisher.url("/download.php"), limits: Self.short)
        }
        #expect(error?.code == .truncated)
        #expect(error?.message.contains("after 10 of the \(Self.keyList.count) announced bytes") == true)
    }

    @Test("A body over the cap is refused: announced, at once; chunked, with reading stopped near the cap")
    func oversized() async throws {
        let (publisher, fetcher) = try await Self.publisher()
        let limits = FetchLimits(maximumBodyBytes: 256 << 10, headTimeout: .seconds(10), bodyTimeout: .seconds(10))
        publisher.fail("/announced", .oversized(bytes: 1 << 30, announced: true))
        let announced = await Self.failure { () throws(FetchError) in
            try await fetcher.fetch(publisher.url("/announced"), limits: limits)
        }
        #expect(announced?.code == .tooLarge)
        #expect(announced?.message.contains("announces 1073741824 bytes") == true)

        publisher.fail("/chunked", .oversized(bytes: 1 << 30, announced: false))
        let chunked = await Self.failure { () throws(FetchError) in
            try await fetcher.fetch(publisher.url("/chunked"), limits: limits)
        }
        #expect(chunked?.code == .tooLarge)
        // The client closed the connection at the cap: of the 1 GiB body the publisher handed over only what it
        // wrote before it saw the close (tens of MiB on a loaded machine: its writes queue in NIO beyond the
        // sockets' buffers), far from the whole.
        try await Task.sleep(for: .milliseconds(100))
        #expect(publisher.bodyBytesSent("/chunked") < 256 << 20)
    }

    @Test("A content type other than those accepted is an error naming what came")
    func wrongContentType() async throws {
        let (publisher, fetcher) = try await Self.publisher()
        publisher.fail("/download.php", .contentType("text/html; charset=utf-8"))
        let error = await Self.failure { () throws(FetchError) in
            try await fetcher.fetch(publisher.url("/download.php"), limits: Self.short, accepting: ["application/xml"])
        }
        #expect(error?.code == .wrongContentType)
        #expect(error?.message.contains("text/html") == true)
    }

    @Test("A redirect on the same host is followed; to another host or scheme it is refused, naming both hosts")
    func redirects() async throws {
        let (publisher, fetcher) = try await Self.publisher()
        publisher.fail("/old.php", .redirect(to: "/download.php"))
        let followed = try await fetcher.fetch(publisher.url("/old.php"), limits: Self.short)
        #expect(followed == .served(Self.keyList, by: publisher))

        for other in [
            "https://127.0.0.2:\(publisher.port)/download.php", "https://localhost:\(publisher.port)/download.php",
            "http://127.0.0.1:\(publisher.port)/download.php",
        ] {
            publisher.fail("/moved.php", .redirect(to: other, status: 301))
            let error = await Self.failure { () throws(FetchError) in
                try await fetcher.fetch(publisher.url("/moved.php"), limits: Self.short)
            }
            #expect(error?.code == .redirectToOtherHost)
            #expect(error?.message.contains("https://127.0.0.1:\(publisher.port)") == true)
            #expect(error?.message.contains(other.replacingOccurrences(of: "/download.php", with: "")) == true)
        }

        publisher.fail("/loop.php", .redirect(to: "/loop.php"))
        let loop = await Self.failure { () throws(FetchError) in
            try await fetcher.fetch(publisher.url("/loop.php"), limits: Self.short)
        }
        #expect(loop?.code == .badRedirect)
        #expect(publisher.requests("/loop.php").count == 4)
    }

    @Test("TLS: the publisher's CA pinned is trusted, another CA or the system's CAs are not")
    func pinnedCA() async throws {
        let (publisher, _) = try await Self.publisher()
        let url = publisher.url("/download.php")
        for trust in [PublisherTrust.pinnedCA(path: publisher.pki.otherCACertificate), .systemCAs] {
            let error = await Self.failure { () throws(FetchError) in
                try await PublisherFetcher(trust: trust).fetch(url, limits: Self.short)
            }
            #expect(error?.code == .tlsFailed)
            #expect(error?.message.contains(url) == true)
        }
    }

    @Test("TLS: an SPKI pin of the server's key or its CA's is trusted; another key, or a copied CA, is not")
    func pinnedSPKI() async throws {
        let (publisher, _) = try await Self.publisher()
        let url = publisher.url("/download.php")
        for pins in [
            [publisher.pki.serverPin], [publisher.pki.caPin], [publisher.pki.otherCAPin, publisher.pki.caPin],
        ] {
            let outcome = try await PublisherFetcher(trust: .pinnedSPKI(pins)).fetch(url, limits: Self.short)
            #expect(outcome == .served(Self.keyList, by: publisher))
        }
        let mismatch = await Self.failure { () throws(FetchError) in
            try await PublisherFetcher(trust: .pinnedSPKI([publisher.pki.otherCAPin])).fetch(url, limits: Self.short)
        }
        #expect(mismatch?.code == .tlsFailed)

        // A server whose certificate another CA issued, presenting the pinned CA's (public) certificate beside it.
        let forger = try await LoopbackPublisher.start(identity: .forgedChain)
        forger.serve("/download.php", Self.keyList, contentType: "application/xml")
        let forged = await Self.failure { () throws(FetchError) in
            try await PublisherFetcher(trust: .pinnedSPKI([publisher.pki.caPin]))
                .fetch(forger.url("/download.php"), limits: Self.short)
        }
        #expect(forged?.code == .tlsFailed)

        let badPin = await Self.failure { () throws(FetchError) in
            try await PublisherFetcher(trust: .pinnedSPKI(["not a hash"])).fetch(url, limits: Self.short)
        }
        #expect(badPin?.code == .misconfigured)
    }

    @Test("Plain http:// is refused unless allowed")
    func plainHTTP() async throws {
        let publisher = try await LoopbackPublisher.start(secure: false)
        publisher.serve("/version.txt", text: "2025-01-01T00:00:00Z")
        let url = publisher.url("/version.txt")
        let refused = await Self.failure { () throws(FetchError) in try await PublisherFetcher().fetch(url) }
        #expect(refused?.code == .misconfigured)
        #expect(publisher.requests("/version.txt").isEmpty)
        let text = try await PublisherFetcher(allowsPlainHTTP: true).fetchVersionFile(url)
        #expect(text == "2025-01-01T00:00:00Z")
    }

    @Test("Nothing listening is an unreachable error naming the URL")
    func unreachable() async throws {
        let port = try LoopbackPort.unused()
        let url = "https://127.0.0.1:\(port)/download.php"
        let error = await Self.failure { () throws(FetchError) in try await PublisherFetcher().fetch(url) }
        #expect(error?.code == .unreachable)
        #expect(error?.message.contains(url) == true)
    }
}

extension FetchOutcome {
    /// The outcome of fetching `bytes` as `publisher` serves them at `/download.php`.
    static func served(_ bytes: [UInt8], by publisher: LoopbackPublisher) -> FetchOutcome {
        .fetched(
            body: bytes, etag: publisher.etag("/download.php"), lastModified: publisher.lastModified("/download.php"),
            contentType: "application/xml")
    }
}
