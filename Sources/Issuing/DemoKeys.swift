// Generated from the files in Keys/ (a test checks they match). DEMO keys: published, never for real tickets.

/// The demo trust material embedded in the binary, so that `farecheck demo` needs no files.
public enum DemoKeys {
    /// Private key files (farecheck issuing-key format) by algorithm name.
    public static let issuingKeys: [(algorithm: String, file: String, text: String)] = [
        (
            "ES256", "demo-transit-es256.key",
            """
            # farecheck issuing key (DEMO ONLY: published, never use for real tickets)
            # issuer: demo-transit
            # kid: a6615e0f615889bb
            # alg: ES256
            -----BEGIN PRIVATE KEY-----
            MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgXLhnPMQxan1JV3ju
            tX+cZnKpYud4PxhMmGme/rp/g1WhRANCAARE5yc+zeEY8A7w3zwIlJf85xmrKTL1
            WjnQ/iP4sk07Ncx7z+PcgGU7kwAT0viM91zbv7m8lOFJoyBq7L9LrDSU
            -----END PRIVATE KEY-----
            """ + "\n"
        ),
        (
            "EdDSA", "demo-transit-eddsa.key",
            """
            # farecheck issuing key (DEMO ONLY: published, never use for real tickets)
            # issuer: demo-transit
            # kid: 3e4978b524b37a2f
            # alg: EdDSA
            -----BEGIN PRIVATE KEY-----
            MC4CAQAwBQYDK2VwBCIEINdmg8UXw5uH80K9qzUSRt3BGTK5YUEJ3P86Yk9Rpy6f
            -----END PRIVATE KEY-----
            """ + "\n"
        ),
        (
            "PS256", "demo-transit-ps256.key",
            """
            # farecheck issuing key (DEMO ONLY: published, never use for real tickets)
            # issuer: demo-transit
            # kid: 720e03a90b9162eb
            # alg: PS256
            -----BEGIN PRIVATE KEY-----
            MIIEvwIBADANBgkqhkiG9w0BAQEFAASCBKkwggSlAgEAAoIBAQC4wEtnJUJFHE00
            wq2TpsPKGD/lXkGQuCrJ2WClFatMM3IzGKFt6yH+NE+4p2VapMUFOJTBOilaA7Ui
            R6Oc7nL9j7j1Oz13H7p5ZPaLLAR60p0f0bvxKwTTuzPhx/9DJia5GTABpLf6hDdx
            LPWLxihFAoCaHFCB+ayWiFCtKbPVCES1ZeRP58QZhJ3OzQtkNDR4YTlLvlW9y5YP
            w5+7czhMI/9FG9XGS80VAeVBNU4pa/6EkUaeJe7j6MqVamEtnNxaMzNaLjQxhJv/
            R6kFAmce358lRSrtq+Kv2QbQZZ5x2T44YO8gDJ9RxgChYG/U5LvCfPnhsnUF6TUd
            BiYGCuRdAgMBAAECggEAHe65yLpWpE/TimrIKJXqPsHzCDxfLw1HkXBwog6CtFPZ
            esHQ1bg0x7S9/dLRLwBnE1N5dlzv+i+Dl0w4C+LuKnqworq4WKaBVc2vzBiTmTqq
            Tk9yvb4UiCFaZIg8qSpzN6YHCx0e2a22NdXs6npuZ8/h+hYATS6gcbsgJw4MnsTz
            pZ+avLYAOXVsFU7CqAlNxGlUUPN8qHzVEuHyWC1wWj3vBL9UcITZlY5dXHo5r+n0
            zPIfsZaDg22zmXtGNd07sJ1/ATB8FflN34i+G1bvuP1zSr4t7a0+pDVd0W6EOdXZ
            z9lyqP8AZgw9BpNgSqtCNfKeKxrm7Y2rIr2fK0h7WQKBgQDieJfMTIkansqv1WVe
            yx0se9JvVoHnfjZs5oiO3XsBYud0OpdAyi2FdqYCanJLgCEmFfrpPkXm3padh3ZB
            HhjMp+0jXUtyvcJQxpxFxivacOODCS28mBgDnNPOLtEH5mdEhGw0YqTelWfi2B2j
            IFsE4EitbOSda1oGXxWdeca3ywKBgQDQ1yCKk4egYPw+PjHQNqAscp9DOXjcGBpO
            idbJc0OR0EBrJrfcBDyC3wXvmM8cEePg5Z7Jrv/IIXPCs2xxCvLJAm9ZEqUyOkug
            yqow2oPsTTopgp64Wv+J+qtKTwULnUjmhMQ1NT16gI86BgIp9i0cW43XJMgBvK9H
            znX110G/dwKBgQCth+wAzlBsBmqWqvQe25ICKOrJB0dIw2weq9LNbaY4HLnvVInb
            Sk/xKUXxKfFkKsy7qzH0kRPs4HgWQtr48H/eKXpKk80hIYgIbvcFe+DUY5XhLSJP
            lVcpRX0CSts+q2xLkxB6X2+nYmIU7rZe7YbwyI7H3F2cxcpYgXlFji8XWwKBgQCM
            w9RtU4+hbH3ZPna5D3jbPM9Yso5iW+Svd31M/+JVkHc7Qje/lyNqWwVXQDqpgu2E
            k4F6E/jYXqP2YpX/hA+tqXSAJ28t8dk0IiahE0jEqDFB9YciYEPKLynxxl1yPKv8
            pRTTgHVV8v2XcKFYw1QYvyVWFLazZQkIb4NXF6Z7dQKBgQCRTolxxDc6omyfngdZ
            zqdyM+SDRMQ1IqIjWo2V5vN5etu8idbz+Dlvutv6J2OOGwOGfXQBXQgUqJz/fFKr
            wYH7YOtL/3EJE6qX1zuW+IM/jVVtcuKiqaBsSSdQHqT/T991fCBdh+9Y01BJL124
            Zi18QK7BdDlywOYbkm3ditOO1w==
            -----END PRIVATE KEY-----
            """ + "\n"
        ),
    ]
}
