import FareCore
import Foundation
import Testing
import ValidationAPI

/// An online check on the wire: the request held to the OpenAPI document's patterns, the answer read from servers
/// older and newer than this validator.
@Suite("Online checks on the wire")
struct OnlineCheckTests {
    static func request(_ json: String) throws -> OnlineCheckRequest {
        try WireFormat.decode(OnlineCheckRequest.self, from: Array(json.utf8))
    }

    @Test("a request is written with base64 payload and hex ticket id, and what is not claimed is left out")
    func written() throws {
        let claim = OnlineCheckRequest(
            payload: Array("FC1:6BF".utf8), format: Recorded(.fc1), issuer: "demo-transit", ticketID: [0xc0, 0xff],
            keyID: "a6615e0f615889bb", claimFirstUse: true, inspectionID: "6F1C3C1E-0E8B-4F43-9F7B-2D0A2C9E1B55")
        let text = String(decoding: try WireFormat.encode(claim), as: UTF8.self)
        #expect(
            text
                == #"{"claimFirstUse":true,"format":"fc1","inspectionID":"6F1C3C1E-0E8B-4F43-9F7B-2D0A2C9E1B55","#
                + #""issuer":"demo-transit","keyID":"a6615e0f615889bb","payload":"RkMxOjZCRg==","ticketID":"c0ff"}"#)
        #expect(try Self.request(text) == claim)
        // A plain check: no claim, no empty ticket id (the document's pattern wants a byte at least).
        let plain = OnlineCheckRequest(payload: [1, 2, 3], ticketID: [])
        #expect(String(decoding: try WireFormat.encode(plain), as: UTF8.self) == #"{"payload":"AQID"}"#)
    }

    @Test("an inspection id of 1 to 128 bytes is taken; an empty or longer one is refused")
    func inspectionIDLength() throws {
        let longest = String(repeating: "i", count: OnlineCheckRequest.maximumInspectionIDLength)
        #expect(try Self.request(#"{"payload":"","inspectionID":"\#(longest)"}"#).inspectionID?.rawValue == longest)
        for id in ["", longest + "i", String(repeating: "é", count: 65)] {
            let error = #expect(throws: DecodingError.self) {
                try Self.request(#"{"payload":"","inspectionID":"\#(id)"}"#)
            }
            guard case .dataCorrupted(let context) = error else {
                Issue.record("\(String(describing: error))")
                continue
            }
            #expect(context.debugDescription == "inspectionID must be 1 to 128 bytes")
        }
    }

    @Test(
        "a request's fields are held to the document's patterns: padded standard base64, lowercase hex, no null",
        arguments: [
            #"{"payload":"AQI"}"#, #"{"payload":"AQ=D"}"#, #"{"payload":"AQ-_"}"#, #"{"payload":"AQID\n"}"#,
            #"{"payload":"AQID","ticketID":"C0FF"}"#, #"{"payload":"AQID","ticketID":"c0f"}"#,
            #"{"payload":"AQID","ticketID":""}"#, #"{"payload":"AQID","issuer":null}"#,
            #"{"payload":"AQID","claimFirstUse":null}"#, #"{"ticketID":"c0ff"}"#,
        ])
    func patterns(json: String) {
        #expect(throws: DecodingError.self) { try Self.request(json) }
    }

    @Test("the last base64 digit's unused bits are ignored, as the document's pattern allows any digit there")
    func base64LastDigit() throws {
        #expect(try Self.request(#"{"payload":"AQI="}"#).payload == [1, 2])
        #expect(try Self.request(#"{"payload":"AQJ="}"#).payload == [1, 2])
        #expect(try Self.request(#"{"payload":"AR=="}"#).payload == [1])
    }

    @Test(
        "an answer with a verdict a newer server added reads, and is not revoked; an older server's has no explanation")
    func answers() throws {
        let newer = try WireFormat.decode(
            OnlineCheckResponse.self,
            from: Array(#"{"verdict":"suspended","reason":"Suspended by the agency.","revoked":false}"#.utf8))
        #expect(newer.verdict.known == nil && newer.verdict.text == "suspended")
        #expect(newer.revoked == false && newer.reason == "Suspended by the agency." && newer.explanation == nil)

        let answer = OnlineCheckResponse(
            verdict: .alreadyUsed, reason: "First used at \("gate-7").", revoked: false,
            firstUse: FirstUse(
                device: "gate-7", usedAt: Date(timeIntervalSince1970: 1_795_336_200), inspectionID: "r1",
                claimed: false))
        let read = try WireFormat.decode(OnlineCheckResponse.self, from: try WireFormat.encode(answer))
        #expect(read == answer)
        #expect(read.verdict == .alreadyUsed && read.explanation?.template == "First used at {0}.")
        #expect(read.reason == "First used at gate-7.")
    }
}
