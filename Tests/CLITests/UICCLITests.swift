import Foundation
import TestSupport
import Testing

/// The UIC fixtures, as copied into the verification tests' resources.
let uicFixtures = Fixtures.path("uic")

@Suite("farecheck with UIC 918.3 tickets")
struct UICCLITests {
    let bench = Workbench()

    @Test("importing the UIC key list keeps every good key, reports the bad one, and updates in place")
    func keyListImport() throws {
        let xml = "\(uicFixtures)/uic-publickeys-snapshot.xml"
        let first = try bench.farecheck(["keys", "import", "--uic-xml", xml])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.text.contains("59 added, 0 updated, 1 skipped"))
        #expect(first.stderr.contains("1182/2"))
        let keys = try bench.farecheck(["keys", "list", "--json"]).jsonLines
        #expect(keys.count == 59)
        let d7 = try #require(keys.first { $0["issuer"] as? String == "1080" && $0["keyId"] as? String == "7" })
        #expect(d7["format"] as? String == "uic-918-3")
        #expect(d7["versionType"] as? String != nil)
        #expect((d7["keyType"] as? String)?.hasPrefix("DSA") == true)

        // A key of our own that the list does not name survives a re-import, and goes with --replace.
        #expect(
            try bench.farecheck([
                "keys", "import", "\(uicFixtures)/0080-00007.pem", "--issuer", "0080", "--kid", "00007",
            ]).status == 0)
        let again = try bench.farecheck(["keys", "import", "--uic-xml", xml])
        #expect(again.text.contains("0 added, 59 updated"))
        #expect(try bench.farecheck(["keys", "list", "--json"]).jsonLines.count == 60)
        let replaced = try bench.farecheck(["keys", "import", "--uic-xml", xml, "--replace"])
        #expect(replaced.text.contains("1 removed"))
        #expect(try bench.farecheck(["keys", "list", "--json"]).jsonLines.count == 59)
    }

    @Test("a UIC ticket verifies with its certificate, as of a date in the key window, and key-expired today")
    func verifyWithCertificate() throws {
        #expect(
            try bench.farecheck([
                "keys", "import", "\(uicFixtures)/1080-00002.pem", "--issuer", "1080", "--kid", "00002",
            ]).status == 0)
        let ticket = "\(uicFixtures)/db-supersparpreis-v2-sha256.bin"
        // Inside the key's window and the ticket's own (U_FLEX: 2022-04-22 00:00 – 04-23 10:00, UTC+2).
        let then = try bench.farecheck(["verify", "--payload-file", ticket, "--at", "2022-04-22T12:00:00Z", "--json"])
        #expect(then.status == 0, "\(then.text)")
        let verdict = try #require(then.jsonLines.first)
        #expect(verdict["verdict"] as? String == "valid")
        #expect(verdict["format"] as? String == "uic-918-3")
        #expect(verdict["warnings"] as? [String] == [])
        #expect(verdict["product"] as? String == "Super Sparpreis")
        // A year later the key still lives, but the ticket has expired: U_FLEX validity is checked.
        let later = try bench.farecheck(["verify", "--payload-file", ticket, "--at", "2023-06-01T12:00:00Z"])
        #expect(later.status == 1)
        #expect(later.text.hasPrefix("EXPIRED"), "\(later.text)")
        // Today the key has expired too, but it was valid when the ticket was issued: the ticket's own end decides.
        let today = try bench.farecheck(["verify", "--payload-file", ticket])
        #expect(today.status == 1)
        #expect(today.text.hasPrefix("EXPIRED"), "\(today.text)")
        #expect(today.text.contains("signature  valid"))
        #expect(today.text.contains("header version 02"))
        #expect(today.text.contains("U_FLEX 13 185"))
    }

    @Test("verify shows the inspector-facing content and draws the layout")
    func showLayout() throws {
        try bench.farecheck(["keys", "import", "--uic-xml", "\(uicFixtures)/uic-publickeys-snapshot.xml"])
        let run = try bench.farecheck([
            // FCB validity: from 2025-02-27 09:14Z (the issuing time) to 2025-03-01 02:00Z.
            "verify", "--payload-file", "\(uicFixtures)/db-deutschland-ticket-2025.bin", "--at", "2025-02-28T12:00:00Z",
            "--show-layout",
        ])
        #expect(run.status == 0, "\(run.text)")
        #expect(run.text.hasPrefix("VALID"))
        #expect(run.text.contains("ticket key QWXY3BTA"))
        #expect(run.text.contains("issued     27.02.2025 10:14"))
        let grid = run.text.split(separator: "\n").filter { $0.hasPrefix("  |") }
        #expect(grid.count >= 12)
        #expect(grid.contains { $0.contains("Deutschland-Ticket") && $0.contains("Person(en)") })
        #expect(grid.last?.contains("Gültig vom 01.02.2025 bis 01.03.2025") == true)
    }

    @Test("a UIC ticket can be revoked by its ticket key")
    func revokeByTicketKey() throws {
        try bench.farecheck(["keys", "import", "\(uicFixtures)/0080-00007.pem", "--issuer", "0080", "--kid", "00007"])
        let ticket = "\(uicFixtures)/db-city-mobil-v1-sha1.bin"
        #expect(try bench.farecheck(["verify", "--payload-file", ticket, "--at", "2021-01-11T12:00:00Z"]).status == 0)
        #expect(
            try bench.farecheck(["revoke", "--issuer", "0080", "--ticket-key", "RPEX4F-4", "--reason", "refunded"])
                .status == 0)
        let run = try bench.farecheck(["verify", "--payload-file", ticket, "--at", "2021-01-11T12:00:00Z", "--json"])
        #expect(run.jsonLines.first?["verdict"] as? String == "revoked")
    }

    @Test("--show-fcb prints the U_FLEX record's every field, nested; the Deutschland-Ticket shows holder and window")
    func showFCB() throws {
        #expect(
            try bench.farecheck(["keys", "import", "--uic-xml", "\(uicFixtures)/uic-publickeys-snapshot.xml"]).status
                == 0)
        let ticket = "\(uicFixtures)/db-deutschland-ticket-2025.bin"
        let run = try bench.farecheck([
            "verify", "--payload-file", ticket, "--at", "2025-02-28T12:00:00Z", "--json", "--show-fcb",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let verdict = try #require(run.jsonLines.first)
        #expect(verdict["verdict"] as? String == "valid")
        #expect(verdict["holder"] as? String == "Max Mustermann, born 2001-01-01")
        #expect(
            verdict["holderCheck"] as? [String: String] == [
                "name": "Max Mustermann", "givenName": "Max", "familyName": "Mustermann", "dateOfBirth": "2001-01-01",
            ])
        #expect(verdict["validFrom"] as? String == "2025-02-27T09:14:00Z")
        let fcb = try #require(verdict["fcb"] as? [String: Any])
        let issuing = try #require(fcb["issuingDetail"] as? [String: Any])
        #expect(issuing["issuingYear"] as? Int == 2025 && issuing["issuerPNR"] as? String == "QWXY3BTA")
        let documents = try #require(fcb["transportDocument"] as? [[String: Any]])
        let open = try #require((documents.first?["ticket"] as? [String: Any])?["openTicket"] as? [String: Any])
        #expect(open["validUntilDay"] as? Int == 2 && open["productIdIA5"] as? String == "Fahrkarte")

        let text = try bench.farecheck([
            "verify", "--payload-file", ticket, "--at", "2025-06-01T12:00:00Z", "--show-fcb",
        ])
        #expect(text.status == 1)
        #expect(text.text.hasPrefix("EXPIRED"))
        #expect(text.text.contains("\"tariffDesc\":\"Deutschland-Ticket\""))
    }

    @Test(
        "both UIC key lists in one store: the older list's expired DB keys stay and vouch for the tickets they signed")
    func bothKeyLists() throws {
        let db = Fixtures.path("uic-918-9-db")
        for list in ["uic/uic-publickeys-snapshot.xml", "uic/uic-publickeys-historic.xml"] {
            let run = try bench.farecheck(["keys", "import", "--uic-xml", Fixtures.path(list)])
            #expect(run.status == 0, "\(run.stderr)")
        }
        let keys = try bench.farecheck(["keys", "list", "--json"]).jsonLines
        #expect(keys.contains { $0["issuer"] as? String == "1080" && $0["keyId"] as? String == "1" })
        #expect(keys.contains { $0["issuer"] as? String == "3703" && $0["keyId"] as? String == "7" })
        let sample = "\(db)/Muster-918-9-Laenderticket-Bayern.bin"
        let today = try #require(try bench.farecheck(["verify", "--payload-file", sample, "--json"]).jsonLines.first)
        #expect(today["verdict"] as? String == "expired")
        #expect(today["signature"] as? String == "valid")
        let keysJudged = try #require(today["keys"] as? [[String: Any]])
        #expect(keysJudged.first?["outcome"] as? String == "verified")
        #expect((keysJudged.first?["listing"] as? String)?.hasPrefix("FCB, barcode version 1") == true)
    }

    @Test("key scope: keys with the ticket's issuer and id listed for other barcodes are named, never make it forged")
    func keyScope() throws {
        // Two keys of our own with the city ticket's issuer and key id (0080/00007): one listed for DOSIPAS, one for
        // SSB, as an issuer that reuses a key id would list them. The ticket's own key is not in the list.
        var entries = ""
        for (name, versionType, version, algorithm) in [
            ("ec", "DOS", "2", "SHA256withECDSA"), ("dsa", "SSB", "3", "SHA1withDSA(1024,160)"),
        ] {
            let generate =
                name == "ec"
                ? "openssl ecparam -name prime256v1 -genkey -noout -out \(name).key"
                : "openssl dsaparam -genkey -out \(name).key 1024"
            #expect(try bench.shell(generate + " 2>/dev/null").status == 0)
            let spki = try bench.shell("openssl pkey -in \(name).key -pubout -outform DER | base64 -w0")
            entries += """
                <key><issuerName>Test</issuerName><issuerCode>80</issuerCode><versionType>\(versionType)</versionType>\
                <signatureAlgorithm>\(algorithm)</signatureAlgorithm><id>7</id><publicKey>\(spki.text)</publicKey>\
                <barcodeVersion>\(version)</barcodeVersion><startDate>2015-01-01</startDate><endDate>2030-12-31</endDate>\
                <keyForged/></key>
                """
        }
        let list = bench.directory + "/colliding-keys.xml"
        try Data(("<keys>" + entries + "</keys>").utf8).write(to: URL(fileURLWithPath: list))
        #expect(try bench.farecheck(["keys", "import", "--uic-xml", list]).status == 0)
        let keys = try bench.farecheck(["keys", "list"])
        #expect(keys.text.contains("in scope for DOSIPAS; not for #UT01, #UT02, SSB version 3"), "\(keys.text)")
        #expect(keys.text.contains("in scope for SSB version 3; not for #UT01, #UT02, DOSIPAS"), "\(keys.text)")

        let ticket = "\(uicFixtures)/db-city-mobil-v1-sha1.bin"
        let run = try bench.farecheck([
            "verify", "--payload-file", ticket, "--at", "2021-01-11T12:00:00Z", "--explain",
        ])
        #expect(run.status == 1)
        #expect(run.text.hasPrefix("UNKNOWN-KEY  No key in scope for this #UT01 barcode has 0080/00007"), "\(run.text)")
        #expect(run.text.contains("80/7 SKIPPED: listed for DOSIPAS barcodes (DOS), not #UT01"), "\(run.text)")
        #expect(run.text.contains("80/7 SKIPPED: listed for SSB barcodes, not #UT01"))
        let json = try #require(
            try bench.farecheck(["verify", "--payload-file", ticket, "--at", "2021-01-11T12:00:00Z", "--json"])
                .jsonLines.first)
        #expect(json["verdict"] as? String == "unknown-key")
        #expect((json["keys"] as? [[String: Any]])?.count == 2)

        // The ticket's own key, by hand: valid, the two others still named as skipped.
        #expect(
            try bench.farecheck([
                "keys", "import", "\(uicFixtures)/0080-00007.pem", "--issuer", "0080", "--kid", "00007",
            ]).status == 0)
        let valid = try bench.farecheck([
            "verify", "--payload-file", ticket, "--at", "2021-01-11T12:00:00Z", "--explain",
        ])
        #expect(valid.status == 0, "\(valid.text)")
        #expect(valid.text.contains("80/7 VERIFIED: the signature matches"))
        #expect(valid.text.contains("no key list entry (added by hand)"))
    }
}
