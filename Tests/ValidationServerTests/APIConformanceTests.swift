import FareCore
import Foundation
import NIOHTTP1
import TestSupport
import Testing
import ValidationAPI

/// Where schemathesis found the server and `API/openapi.yaml` disagreeing, each case as it is now agreed.
@Suite("The server enforces what the OpenAPI document says, and no more", .timeLimit(.minutes(5)))
struct APIConformanceTests {
    @Test(
        "a method the document does not list on a known path gets 405 with Allow; an unknown path still 404",
        arguments: Backend.available)
    func methodNotAllowed(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        let token = try bench.addDevice("v1")
        let server = try bench.startServer()
        let cases: [(HTTPMethod, String, String)] = [
            (.PUT, "/v1/keys", "GET"), (.DELETE, "/v1/revocations", "GET"), (.GET, "/v1/inspections", "POST"),
            (.PATCH, "/v1/check", "POST"), (.POST, "/v1/health", "GET"), (.OPTIONS, "/v1/keys", "GET"),
        ]
        for (method, path, allowed) in cases {
            let answer = try await send(method, server.baseURL + path, token: token)
            #expect(answer.status == 405, "\(method) \(path)")
            #expect(answer.header("Allow") == allowed, "\(method) \(path)")
            #expect(answer.errorBody?.error == "method-not-allowed")
        }
        #expect(try await send(.PUT, server.baseURL + "/v1/nothing", token: token).status == 404)
    }

    @Test("a negative since is refused with 400, as the document's minimum says", arguments: Backend.available)
    func negativeSince(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        let token = try bench.addDevice("v1")
        try bench.adminOK([
            "keys", "publish", "--allow-empty", "--anchor-key", "\(repositoryRoot)/Keys/demo-anchor.key",
        ])
        let server = try bench.startServer()
        let refused = try await send(.GET, server.baseURL + "/v1/keys?since=-2434730", token: token)
        #expect(refused.status == 400)
        #expect(refused.errorBody?.error == "bad-request")
        #expect(try await send(.GET, server.baseURL + "/v1/keys?since=0", token: token).status == 200)
    }

    @Test(
        "check bodies the document allows are answered; ones its patterns or types refuse get 400",
        arguments: Backend.available)
    func checkBodies(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        let token = try bench.addDevice("v1")
        let server = try bench.startServer()
        func post(_ body: String) async throws -> HTTPAnswer {
            try await send(.POST, server.baseURL + "/v1/check", token: token, body: Array(body.utf8))
        }
        let allowed = [
            #"{"payload":""}"#,
            // The pattern allows any last digit; its unused low bits are ignored.
            #"{"payload":"AB=="}"#,
            #"{"payload":"AAB=","issuer":"i\u0000","ticketID":"00ff","keyID":"","extra":[1]}"#,
            #"{"payload":"QUJD","format":"fc1","issuer":"demo","keyID":"k"}"#,
        ]
        for body in allowed {
            let answer = try await post(body)
            #expect(answer.status == 200, "\(body): \(answer.text)")
        }
        let refused = [
            #"{"payload":"AB"}"#, #"{"payload":"A B="}"#, #"{"payload":"-_=="}"#, #"{"payload":"A==="}"#,
            #"{"payload":"","ticketID":"AB"}"#, #"{"payload":"","ticketID":""}"#, #"{"payload":"","ticketID":"0x01"}"#,
            // Optional members are absent or a string: the document does not allow null.
            #"{"payload":"","keyID":null}"#, #"{"payload":"","ticketID":null}"#,
        ]
        for body in refused {
            let answer = try await post(body)
            #expect(answer.status == 400, "\(body): \(answer.text)")
        }
    }

    @Test(
        "an inspection id of 128 characters is taken whatever its bytes; U+0000 or a null member gets 400",
        arguments: Backend.available)
    func inspectionText(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        let token = try bench.addDevice("v1")
        let server = try bench.startServer()
        let url = server.baseURL + "/v1/inspections"
        let record = InspectionRecord(
            id: String(repeating: "é", count: 128), inspectedAt: 0, device: "d", symbology: nil, payloadDigest: [0],
            format: nil, issuer: nil, ticketID: nil, verdict: "valid", reason: "", signature: "valid", warnings: "",
            inspector: nil)
        let taken = try await send(
            .POST, url, token: token, body: try WireFormat.encode(InspectionBatch(records: [record])))
        #expect(taken.status == 200, "\(taken.text)")
        var tooLong = record
        tooLong.id = InspectionID(tooLong.id.rawValue + "é")
        let long = try await send(
            .POST, url, token: token, body: try WireFormat.encode(InspectionBatch(records: [tooLong])))
        #expect(long.status == 400)
        var withNUL = record
        withNUL.id = "nul"
        withNUL.source = "scanner\u{0}"
        let nul = try await send(
            .POST, url, token: token, body: try WireFormat.encode(InspectionBatch(records: [withNUL])))
        #expect(nul.status == 400, "\(nul.text)")
        #expect(nul.errorBody?.error == "bad-request")
        let nullBatch =
            #"{"records":[{"id":"n","inspectedAt":0,"device":"d","payloadDigest":"00","#
            + #""verdict":"valid","reason":"","signature":"valid","decidedBy":null}]}"#
        let null = try await send(.POST, url, token: token, body: Array(nullBatch.utf8))
        #expect(null.status == 400, "decidedBy is absent or a string, not null")
    }
}
