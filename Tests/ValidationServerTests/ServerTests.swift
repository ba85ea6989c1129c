import FareCore
import Foundation
import NIOHTTP1
import Signatures
import TestSupport
import Testing
import ValidationAPI

/// The reference server, run as `farecheck-server serve` on a loopback port, against each database.
@Suite("farecheck-server over HTTP", .timeLimit(.minutes(5)))
struct ServerTests {
    let demoAnchorKey = "\(repositoryRoot)/Keys/demo-anchor.key"
    let issuerKey = "\(repositoryRoot)/Keys/demo-transit-es256.pub.pem"

    @Test("health answers without a token", arguments: Backend.available)
    func health(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        let server = try bench.startServer()
        let answer = try await send(.GET, server.baseURL + "/v1/health")
        #expect(answer.status == 200)
        let health = try answer.decode(HealthStatus.self)
        #expect(health.status == "ok")
        #expect(health.storage == (backend == .sqlite ? "sqlite" : "postgresql"))
        #expect(server.stop() == 0)
    }

    @Test(
        "no token, an unknown token and a revoked device's token get 401 and only the error body",
        arguments: Backend.available)
    func unauthorized(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        let token = try bench.addDevice("validator-1")
        let server = try bench.startServer()
        let url = server.baseURL + "/v1/revocations?cursor=0"
        #expect(try await send(.GET, url, token: token).status == 200)

        var refusals = [try await send(.GET, url), try await send(.GET, url, token: "not-a-token")]
        refusals.append(try await send(.GET, url, headers: [("Authorization", "Basic dXNlcjpwYXNz")]))
        try bench.adminOK(["devices", "revoke", "validator-1"])
        refusals.append(try await send(.GET, url, token: token))
        refusals.append(
            try await send(
                .POST, server.baseURL + "/v1/inspections", token: token, body: Array(#"{"records":[]}"#.utf8)))
        for answer in refusals {
            #expect(answer.status == 401)
            #expect(answer.errorBody?.error == "unauthorized")
            let object = try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any]
            #expect(Set(object?.keys ?? [:].keys) == ["error", "message"])
        }
        // Unknown and revoked devices are told the same thing.
        #expect(refusals[1].body == refusals[3].body)
        let list = try bench.adminOK(["devices", "list"])
        #expect(list.contains("validator-1\trevoked"))
    }

    @Test(
        "a published key bundle verifies with the pinned demo anchor and holds the issuer keys",
        arguments: Backend.available)
    func keyBundle(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        let token = try bench.addDevice("v1")
        let server = try bench.startServer()
        let url = server.baseURL + "/v1/keys"
        let before = try await send(.GET, url, token: token)
        #expect(before.status == 404)
        #expect(before.errorBody?.error == "no-bundle")

        let empty = try bench.admin(["keys", "publish", "--anchor-key", demoAnchorKey])
        #expect(empty.status == 2)
        #expect(empty.stderr.contains("--allow-empty"))
        try bench.adminOK(["keys", "add", "--issuer", "demo-transit", "--format", "fc1", issuerKey])
        let published = try bench.adminOK(["keys", "publish", "--anchor-key", demoAnchorKey])
        #expect(published.contains("published key bundle 1 with 1 keys"))

        let answer = try await send(.GET, url, token: token)
        #expect(answer.status == 200)
        #expect(answer.header("ETag") == "\"1\"")
        let bundle = try SignedDocument(jsonBytes: answer.body).open(as: KeyBundle.self, trusting: [.demo])
        #expect(bundle.sequence == 1)
        let key = try #require(bundle.keys.first)
        #expect(key.issuer == "demo-transit" && key.format == "fc1" && key.algorithm == "ES256")
        #expect(key.keyID == "a6615e0f615889bb")
        let pem = try String(contentsOfFile: issuerKey, encoding: .utf8)
        #expect(key.spki == (try PublicKey(pem: pem)).spkiDER)

        // Nothing newer: 304 by entity tag or by sequence.
        #expect(try await send(.GET, url, token: token, headers: [("If-None-Match", "\"1\"")]).status == 304)
        #expect(try await send(.GET, url + "?since=1", token: token).status == 304)
        #expect(try await send(.GET, url + "?since=0", token: token).status == 200)
        #expect(try await send(.GET, url + "?since=x", token: token).status == 400)
    }

    @Test(
        "a tampered bundle, a bundle of another anchor and an old bundle are all refused",
        arguments: Backend.available)
    func bundleRefusals(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        let token = try bench.addDevice("v1")
        let server = try bench.startServer()
        let url = server.baseURL + "/v1/keys"
        try bench.adminOK(["keys", "add", "--issuer", "demo-transit", issuerKey])
        try bench.adminOK(["keys", "publish", "--anchor-key", demoAnchorKey])
        let first = try await send(.GET, url, token: token).body

        // Tampered in transit: a key id byte changed inside the payload.
        var document = try SignedDocument(jsonBytes: first)
        let target = Array("a6615e0f".utf8)
        let start = try #require(
            document.payload.indices.first { document.payload[$0...].starts(with: target) })
        document.payload[start] = UInt8(ascii: "b")
        let tampered = try #require(throws: BundleError.self) {
            try SignedDocument(jsonBytes: document.jsonBytes()).open(as: KeyBundle.self, trusting: [.demo])
        }
        #expect(tampered.code == .badSignature)

        // Published with an anchor the validator does not pin.
        let rogue = try PrivateKey.generate(.ecP256)
        try rogue.pemPKCS8.write(toFile: bench.path("rogue.key"), atomically: true, encoding: .utf8)
        try bench.adminOK(["keys", "publish", "--anchor-key", bench.path("rogue.key")])
        let rogueAnswer = try await send(.GET, url, token: token)
        #expect(rogueAnswer.header("ETag") == "\"2\"")
        let unknown = try #require(throws: BundleError.self) {
            try SignedDocument(jsonBytes: rogueAnswer.body).open(as: KeyBundle.self, trusting: [.demo])
        }
        #expect(unknown.code == .unknownAnchor)

        // A validator holding bundle 3 is offered bundle 1 again (replayed): refused by the sequence check.
        try bench.adminOK(["keys", "publish", "--anchor-key", demoAnchorKey])
        let third = try SignedDocument(jsonBytes: try await send(.GET, url, token: token).body)
            .open(as: KeyBundle.self, trusting: [.demo])
        #expect(third.sequence == 3)
        let replayed = try SignedDocument(jsonBytes: first).open(as: KeyBundle.self, trusting: [.demo])
        let rollback = try #require(throws: BundleError.self) {
            try replayed.checkNotRollback(holding: third.sequence)
        }
        #expect(rollback.code == .rollback)
    }

    @Test(
        "revocation deltas carry adds and removals since a cursor; a pruned cursor gets a full snapshot",
        arguments: Backend.available)
    func revocationDeltas(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        let token = try bench.addDevice("v1")
        let server = try bench.startServer()
        func delta(_ cursor: Int64) async throws -> RevocationDelta {
            let answer = try await send(.GET, server.baseURL + "/v1/revocations?cursor=\(cursor)", token: token)
            #expect(answer.status == 200, "\(answer.text)")
            return try SignedDocument(jsonBytes: answer.body).open(as: RevocationDelta.self, trusting: [.demo])
        }

        let empty = try await delta(0)
        #expect(empty.full && empty.next == 0 && empty.addedTickets.isEmpty)

        try bench.adminOK(["revoke", "--issuer", "demo-transit", "--ticket-id", "AA01", "--reason", "stolen"])
        try bench.adminOK(["revoke", "--issuer", "demo-transit", "--ticket-id", "bb02"])
        let snapshot = try await delta(0)
        #expect(snapshot.full && snapshot.next == 2)
        #expect(snapshot.addedTickets.map(\.ticketID.hexString) == ["aa01", "bb02"])
        #expect(snapshot.addedTickets.first?.reason == "stolen")

        try bench.adminOK(["unrevoke", "--issuer", "demo-transit", "--ticket-id", "aa01"])
        try bench.adminOK(["revoke", "--issuer", "demo-transit", "--key", "a6615e0f615889bb", "--format", "fc1"])
        try bench.adminOK(["revoke", "--issuer", "demo-transit", "--ticket-id", "cc03"])
        let since2 = try await delta(2)
        #expect(!since2.full && since2.from == 2 && since2.next == 5)
        #expect(since2.removedTickets == [TicketReference(issuer: "demo-transit", ticketID: [0xaa, 0x01])])
        #expect(since2.addedTickets.map(\.ticketID) == [[0xcc, 0x03]])
        #expect(since2.addedKeys.map(\.keyID) == ["a6615e0f615889bb"])
        #expect(try await delta(5).isEmpty)

        // Lifting a revocation that does not exist is an error and logs nothing.
        #expect(try bench.admin(["unrevoke", "--issuer", "demo-transit", "--ticket-id", "aa01"]).status == 2)
        #expect(try await delta(5).next == 5)

        // After pruning to the last change, cursor 2 can no longer be served as a delta.
        try bench.adminOK(["revocations", "prune", "--keep", "1"])
        let resnapshot = try await delta(2)
        #expect(resnapshot.full && resnapshot.next == 5)
        #expect(Set(resnapshot.addedTickets.map(\.ticketID.hexString)) == ["bb02", "cc03"])
        #expect(resnapshot.addedKeys.count == 1)
        #expect(try await delta(4).full == false)
        // A cursor from the future (another server, a restored backup) also gets a snapshot.
        #expect(try await delta(99).full)
        #expect(try await send(.GET, server.baseURL + "/v1/revocations?cursor=x1", token: token).status == 400)
    }

    @Test("without an anchor key the server refuses to serve unsigned revocations", arguments: Backend.available)
    func noAnchorKey(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        let token = try bench.addDevice("v1")
        let server = try bench.startServer(anchorKey: nil)
        let answer = try await send(.GET, server.baseURL + "/v1/revocations", token: token)
        #expect(answer.status == 503)
        #expect(answer.errorBody?.error == "anchor-key-missing")
    }

    @Test(
        "the same inspection batch sent twice is stored once and acknowledged both times",
        arguments: Backend.available)
    func inspectionsIdempotent(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        let token = try bench.addDevice("validator-7")
        let server = try bench.startServer()
        let records = (1...3).map { index in
            InspectionRecord(
                id: "record-\(index)", inspectedAt: 1_800_000_000_000 + Int64(index), device: "scanner-0",
                symbology: "qr", payloadDigest: digest(.sha256, [UInt8(index)]), format: "fc1",
                issuer: "demo-transit", ticketID: [0x01, UInt8(index)], verdict: "valid", reason: "Valid ticket.",
                signature: "valid", warnings: "", inspector: nil)
        }
        let body = try WireFormat.encode(InspectionBatch(records: records))
        let url = server.baseURL + "/v1/inspections"
        let first = try await send(.POST, url, token: token, body: body)
        #expect(first.status == 200, "\(first.text)")
        let second = try await send(.POST, url, token: token, body: body)
        #expect(second.status == 200)
        #expect(try first.decode(BatchAcknowledgement.self).accepted == ["record-1", "record-2", "record-3"])
        #expect(try second.decode(BatchAcknowledgement.self).accepted == ["record-1", "record-2", "record-3"])

        // A retry that overlaps: one old record, one new.
        let overlap = try WireFormat.encode(
            InspectionBatch(records: [
                records[2],
                {
                    var r = records[0]
                    r.id = "record-4"
                    return r
                }(),
            ]))
        let third = try await send(.POST, url, token: token, body: overlap)
        #expect(try third.decode(BatchAcknowledgement.self).accepted == ["record-3", "record-4"])

        let listed = try bench.adminOK(["inspections", "list", "--json"]).jsonRecords
        #expect(listed.count == 4)
        #expect(Set(listed.compactMap { $0["id"] as? String }) == ["record-1", "record-2", "record-3", "record-4"])
        #expect(listed.allSatisfy { $0["deviceId"] as? String == "validator-7" })
        let stored = try #require(listed.first { $0["id"] as? String == "record-2" })
        #expect(stored["ticketId"] as? String == "0102")
        #expect(stored["payloadDigest"] as? String == digest(.sha256, [2]).hexString)
    }

    @Test("bodies over the cap get 413, broken bodies 400, each with the error body", arguments: Backend.available)
    func bodyLimits(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        let token = try bench.addDevice("v1")
        let server = try bench.startServer()
        let url = server.baseURL + "/v1/inspections"

        let huge = [UInt8](repeating: UInt8(ascii: " "), count: (1 << 20) + 1)
        let tooLarge = try await send(.POST, url, token: token, body: huge)
        #expect(tooLarge.status == 413)
        #expect(tooLarge.errorBody?.error == "body-too-large")

        let record = InspectionRecord(
            id: "x", inspectedAt: 0, device: "d", symbology: nil, payloadDigest: [0], format: nil, issuer: nil,
            ticketID: nil, verdict: "valid", reason: "", signature: "valid", warnings: "", inspector: nil)
        let many = (0...InspectionBatch.maximumRecordCount).map { index in
            var copy = record
            copy.id = "r\(index)"
            return copy
        }
        let tooMany = try await send(
            .POST, url, token: token, body: try WireFormat.encode(InspectionBatch(records: many)))
        #expect(tooMany.status == 413)
        #expect(tooMany.errorBody?.error == "batch-too-large")

        let broken = try await send(.POST, url, token: token, body: Array(#"{"records":[{"id":"a"}]}"#.utf8))
        #expect(broken.status == 400)
        #expect(broken.errorBody?.error == "bad-request")
        #expect(broken.errorBody?.message.contains("inspectedAt") == true)

        var unknownSide = record
        unknownSide.decidedBy = "guessed"
        let refused = try await send(
            .POST, url, token: token, body: try WireFormat.encode(InspectionBatch(records: [unknownSide])))
        #expect(refused.status == 400)
        #expect(refused.errorBody?.message.contains("decidedBy") == true)
        #expect(try bench.adminOK(["inspections", "list", "--json"]) == "[]\n", "nothing of a refused batch is stored")

        let checkCap = [UInt8](repeating: UInt8(ascii: " "), count: OnlineCheckRequest.maximumBodyByteCount + 1)
        #expect(try await send(.POST, server.baseURL + "/v1/check", token: token, body: checkCap).status == 413)

        let missing = try await send(.GET, server.baseURL + "/v1/nothing", token: token)
        #expect(missing.status == 404)
        #expect(missing.errorBody?.error == "not-found")
    }

    @Test("an online check answers revoked for a ticket or key revoked on the server", arguments: Backend.available)
    func onlineCheck(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        let token = try bench.addDevice("v1")
        let server = try bench.startServer()
        func check(_ request: OnlineCheckRequest) async throws -> OnlineCheckResponse {
            let answer = try await send(
                .POST, server.baseURL + "/v1/check", token: token, body: try WireFormat.encode(request))
            #expect(answer.status == 200, "\(answer.text)")
            return try answer.decode(OnlineCheckResponse.self)
        }
        let payload = Array("FC1:NCFOXN%TS3DH".utf8)
        let ticket = OnlineCheckRequest(
            payload: payload, format: "fc1", issuer: "demo-transit", ticketID: [0x12, 0x34], keyID: "a6615e0f615889bb")

        let before = try await check(ticket)
        #expect(before.verdict == "not-revoked" && before.revoked == false)

        // Revoked minutes ago, after the validator's last sync: the server knows better.
        try bench.adminOK(["revoke", "--issuer", "demo-transit", "--ticket-id", "1234", "--reason", "refunded"])
        let after = try await check(ticket)
        #expect(after.verdict == "revoked" && after.revoked == true)
        #expect(after.reason.contains("refunded"))

        let otherTicket = OnlineCheckRequest(
            payload: payload, format: "fc1", issuer: "demo-transit", ticketID: [0x99], keyID: "a6615e0f615889bb")
        #expect(try await check(otherTicket).verdict == "not-revoked")
        try bench.adminOK(["revoke", "--issuer", "demo-transit", "--key", "a6615e0f615889bb"])
        #expect(try await check(otherTicket).verdict == "revoked")

        let unnamed = try await check(OnlineCheckRequest(payload: payload))
        #expect(unnamed.verdict == "unknown" && unnamed.revoked == nil)
    }
}

@Suite("farecheck-server admin commands", .timeLimit(.minutes(5)))
struct AdminCommandTests {
    @Test("an admin command on a database that does not exist says so and exits 2, creating nothing")
    func missingDatabase() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fcs-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let run = try ServerBench.server(["devices", "list", "--db", directory + "/typo.sqlite"], in: directory)
        #expect(run.status == 2)
        #expect(run.stderr.contains("no server database"))
        #expect(run.stderr.contains("farecheck-server init"))
        #expect(!FileManager.default.fileExists(atPath: directory + "/typo.sqlite"))
    }

    @Test(
        "a bad key file, a private key, a bad ticket id and a bad URL are refused with exit status 2",
        arguments: Backend.available)
    func badInput(backend: Backend) throws {
        let bench = try ServerBench(backend)
        try "not a key".write(toFile: bench.path("bad.pem"), atomically: true, encoding: .utf8)
        let badPEM = try bench.admin(["keys", "add", "--issuer", "i", bench.path("bad.pem")])
        #expect(badPEM.status == 2)
        #expect(badPEM.stderr.contains("bad.pem"))
        let privateKey = try bench.admin(["keys", "add", "--issuer", "i", "\(repositoryRoot)/Keys/demo-anchor.key"])
        #expect(privateKey.status == 2)
        #expect(privateKey.stderr.contains("private key"))
        let badHex = try bench.admin(["revoke", "--issuer", "i", "--ticket-id", "xyz"])
        #expect(badHex.status == 2)
        let badURL = try ServerBench.server(
            ["devices", "list", "--database-url", "mysql://x@y/z"], in: bench.directory)
        #expect(badURL.status == 2)
        #expect(badURL.stderr.contains("postgres://"))
        let twice = try bench.admin(["devices", "add", "v"])
        #expect(twice.status == 0)
        let again = try bench.admin(["devices", "add", "v"])
        #expect(again.status == 2)
        #expect(again.stderr.contains("registered already"))
        #expect(try bench.admin(["devices", "revoke", "nobody"]).status == 2)
    }

    @Test("revoking a device or an operator that is not there names it escaped once, as the lists write names")
    func unknownAccount() throws {
        let bench = try ServerBench(.sqlite)
        for (command, noun) in [("devices", "device"), ("operators", "operator")] {
            let run = try bench.admin([command, "revoke", "gate\\7\u{1B}[31m"])
            #expect(run.status == 2)
            let message = "There is no \(noun) gate\\\\7\\u{1B}[31m (see `farecheck-server \(command) list`)."
            #expect(run.stderr == "farecheck-server: \(message)\n")
        }
    }

    @Test("serve refuses a file that is not a server database, leaving it as it was")
    func foreignDatabase() throws {
        let bench = try ServerBench(.sqlite)
        let path = bench.path("notes.txt")
        try "just text".write(toFile: path, atomically: true, encoding: .utf8)
        let run = try ServerBench.server(["serve", "--db", path, "--listen", "127.0.0.1:0"], in: bench.directory)
        #expect(run.status == 2)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "just text")
    }
}
