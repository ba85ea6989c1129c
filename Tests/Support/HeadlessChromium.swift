import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Debian's `chromium`, headless, driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`).
///
/// `--dump-dom` with `--virtual-time-budget` never returns for this page: virtual time only advances while
/// no request is loading, and the page's `/events` stream is loading for as long as it is open. So the
/// browser is asked instead, the way a person would look: wait until the verdict shows, then read the
/// document and take a picture.
public final class HeadlessChromium {
    private let process: Process
    /// The test's end of the socket pair that the browser sees as fds 3 (commands) and 4 (replies).
    private let fd: Int32
    private let profile: String
    private var received: [UInt8] = []
    private var nextID = 1
    private var session: String?

    /// Starts a browser with a profile of its own; fails with how to install it when there is none.
    public init(width: Int, height: Int) throws {
        let candidates = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
        guard let executable = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw LoopbackError(
                description: "chromium is not installed: run scripts/install-deps.sh (Debian package chromium), "
                    + "or set FARECHECK_SKIP_BROWSER=1 to skip the browser tests")
        }
        profile =
            FileManager.default.temporaryDirectory.appendingPathComponent("farecheck-chromium-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: true)
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else {
            throw LoopbackError(description: "socketpair: errno \(errno)")
        }
        fd = pair[0]
        // A browser that stops answering fails the test instead of hanging it.
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let browserEnd = FileHandle(fileDescriptor: pair[1], closeOnDealloc: true)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            "-c", #"exec "$0" "$@" 3<&0 4>&1 </dev/null >/dev/null"#, executable,
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
            "--hide-scrollbars", "--remote-debugging-pipe", "--user-data-dir=\(profile)",
            "--window-size=\(width),\(height)", "about:blank",
        ]
        process.environment = ["HOME": profile, "PATH": "/usr/bin:/bin"]
        process.standardInput = browserEnd
        process.standardOutput = browserEnd
        process.standardError = FileHandle.nullDevice
        try startUnblocked(process)
        try browserEnd.close()
    }

    /// Keeps a screenshot for a person to look at when `FARECHECK_KEEP_SCREENSHOTS` names a directory.
    public static func keep(_ png: Data, as name: String) {
        guard let directory = ProcessInfo.processInfo.environment["FARECHECK_KEEP_SCREENSHOTS"] else { return }
        try? png.write(to: URL(fileURLWithPath: directory).appendingPathComponent(name))
    }

    deinit {
        if process.isRunning { process.terminate() }
        close(fd)
        try? FileManager.default.removeItem(atPath: profile)
    }

    /// Opens `url` in a new page of `width`×`height` CSS pixels, as a handheld shows it.
    public func open(_ url: String, width: Int, height: Int, languages: [String]? = nil) async throws {
        let target = try await command("Target.createTarget", ["url": "about:blank"])
        guard let targetID = target["targetId"] as? String else {
            throw LoopbackError(description: "no target id in \(target)")
        }
        let attached = try await command("Target.attachToTarget", ["targetId": targetID, "flatten": true])
        session = attached["sessionId"] as? String
        _ = try await command(
            "Emulation.setDeviceMetricsOverride",
            ["width": width, "height": height, "deviceScaleFactor": 1, "mobile": true])
        if let languages { try await preferLanguages(languages) }
        _ = try await command("Page.navigate", ["url": url])
    }

    /// The value of a JavaScript expression in the open page (`nil` while the page cannot answer it).
    public func evaluate(_ expression: String) async throws -> Any? {
        let reply = try await command("Runtime.evaluate", ["expression": expression, "returnByValue": true])
        if reply["exceptionDetails"] != nil { return nil }
        return (reply["result"] as? [String: Any])?["value"]
    }

    /// The value of a JavaScript expression that gives a promise, once the promise is settled.
    public func evaluateAwaiting(_ expression: String) async throws -> Any? {
        let reply = try await command(
            "Runtime.evaluate", ["expression": expression, "returnByValue": true, "awaitPromise": true])
        if let exception = reply["exceptionDetails"] {
            throw LoopbackError(description: "the page threw: \(exception)")
        }
        return (reply["result"] as? [String: Any])?["value"]
    }

    /// Runs axe-core's WCAG 2 A and AA rules (2.0, 2.1 and 2.2) on the page as it is now, and returns what they
    /// find: each rule broken, with the elements that break it. axe-core is installed by
    /// `scripts/install-axe-core.sh` (pinned); `FARECHECK_AXE_JS` may name another copy.
    public func accessibilityViolations() async throws -> [AccessibilityViolation] {
        let environment = ProcessInfo.processInfo.environment
        let path = environment["FARECHECK_AXE_JS"] ?? "/usr/local/share/axe-core/axe.min.js"
        guard let axe = FileManager.default.contents(atPath: path) else {
            throw LoopbackError(
                description: "axe-core is not installed at \(path): run scripts/install-axe-core.sh "
                    + "(scripts/install-deps.sh runs it)")
        }
        _ = try await evaluate(String(decoding: axe, as: UTF8.self) + "\n;true")
        let found = try await evaluateAwaiting(
            """
            axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa",
              "wcag22aa"] }, resultTypes: ["violations"] })
              .then((result) => result.violations.map((violation) => ({ id: violation.id, impact: violation.impact,
                help: violation.help, targets: violation.nodes.map((node) => node.target.join(" ")) })))
            """)
        guard let list = found as? [[String: Any]] else {
            throw LoopbackError(description: "axe-core gave no result: \(String(describing: found))")
        }
        return list.map {
            AccessibilityViolation(
                rule: $0["id"] as? String ?? "?", impact: $0["impact"] as? String ?? "",
                help: $0["help"] as? String ?? "", elements: $0["targets"] as? [String] ?? [])
        }
    }

    /// Presses and releases a key as a keyboard would (`Tab`, `Enter`, `Space`), shifted when `shift` is set.
    public func press(_ key: String, shift: Bool = false) async throws {
        let codes: [String: (code: String, keyCode: Int, text: String?)] = [
            "Tab": ("Tab", 9, nil), "Enter": ("Enter", 13, "\r"), "Space": ("Space", 32, " "),
            "ArrowUp": ("ArrowUp", 38, nil), "ArrowDown": ("ArrowDown", 40, nil),
        ]
        guard let (code, keyCode, text) = codes[key] else {
            throw LoopbackError(description: "no key \(key) in HeadlessChromium.press")
        }
        var down: [String: Any] = [
            "type": text == nil ? "rawKeyDown" : "keyDown", "key": key == "Space" ? " " : key, "code": code,
            "windowsVirtualKeyCode": keyCode, "modifiers": shift ? 8 : 0,
        ]
        if let text { down["text"] = text }
        _ = try await command("Input.dispatchKeyEvent", down)
        var up = down
        up["type"] = "keyUp"
        up["text"] = nil
        _ = try await command("Input.dispatchKeyEvent", up)
    }

    /// Makes the page's browser say it prefers `languages` (`navigator.languages`, `Accept-Language`), as a
    /// browser set up in that language would. Call before ``open(_:width:height:)``'s navigation takes effect:
    /// it applies to the open page from the next navigation.
    public func preferLanguages(_ languages: [String]) async throws {
        _ = try await command(
            "Emulation.setUserAgentOverride",
            [
                "userAgent": "Mozilla/5.0 (X11; Linux x86_64) farecheck-tests",
                "acceptLanguage": languages.joined(separator: ","),
            ])
    }

    /// Loads the open page again.
    public func reload() async throws {
        _ = try await command("Page.reload", [:])
    }

    /// Waits until `condition` (a JavaScript expression) is true in the page; fails after 20 seconds.
    public func waitUntil(_ condition: String) async throws {
        for _ in 0..<200 {
            if try await evaluate(condition) as? Bool == true { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw LoopbackError(description: "the page never got to: \(condition)")
    }

    /// The document as it is now, as HTML.
    public func dom() async throws -> String {
        try await evaluate("document.documentElement.outerHTML") as? String ?? ""
    }

    /// Fills in the page's login form and submits it, as an inspector would.
    public func submitLogin(staffID: String, pin: String) async throws {
        let fields = String(decoding: try JSONSerialization.data(withJSONObject: [staffID, pin]), as: UTF8.self)
        _ = try await evaluate(
            """
            (() => {
              const [staffID, pin] = \(fields);
              const form = document.getElementById('login-form');
              document.getElementById('login-error').textContent = '';
              form.staffID.value = staffID;
              form.pin.value = pin;
              form.requestSubmit();
              return true;
            })()
            """)
    }

    /// A PNG of the page's viewport.
    public func screenshot() async throws -> Data {
        let reply = try await command("Page.captureScreenshot", ["format": "png"])
        guard let base64 = reply["data"] as? String, let png = Data(base64Encoded: base64) else {
            throw LoopbackError(description: "no screenshot in the reply")
        }
        return png
    }

    /// Closes the browser and waits for it to exit.
    public func quit() async throws {
        session = nil
        _ = try? await command("Browser.close", [:])
        let process = process
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                process.waitUntilExit()
                continuation.resume()
            }
        }
    }

    /// Sends one DevTools command (to the open page, once there is one) and returns its result.
    private func command(_ method: String, _ parameters: [String: Any]) async throws -> [String: Any] {
        let id = nextID
        nextID += 1
        var message: [String: Any] = ["id": id, "method": method, "params": parameters]
        if let session, !method.hasPrefix("Target."), !method.hasPrefix("Browser.") { message["sessionId"] = session }
        let bytes = Array(try JSONSerialization.data(withJSONObject: message)) + [0]
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { throw LoopbackError(description: "the browser is gone (send: errno \(errno))") }
            offset += sent
        }
        // Replies are NUL-terminated JSON; events in between are not needed here.
        while true {
            while let end = received.firstIndex(of: 0) {
                let text = Data(received[..<end])
                received.removeSubrange(...end)
                guard let reply = try JSONSerialization.jsonObject(with: text) as? [String: Any],
                    reply["id"] as? Int == id
                else { continue }
                if let error = reply["error"] {
                    throw LoopbackError(description: "\(method) failed: \(error)")
                }
                return reply["result"] as? [String: Any] ?? [:]
            }
            let more = try await Self.read(fd)
            if more.isEmpty { throw LoopbackError(description: "the browser exited during \(method)") }
            received += more
        }
    }

    private static func read(_ fd: Int32) async throws -> [UInt8] {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                var buffer = [UInt8](repeating: 0, count: 1 << 16)
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if count >= 0 {
                    continuation.resume(returning: Array(buffer[..<count]))
                } else {
                    continuation.resume(
                        throwing: LoopbackError(description: "no answer from the browser (errno \(errno))"))
                }
            }
        }
    }
}

/// A WCAG rule axe-core found broken on a page, and where.
public struct AccessibilityViolation: CustomStringConvertible, Sendable {
    /// axe-core's rule id, e.g. `color-contrast`.
    public var rule: String
    /// `minor`, `moderate`, `serious` or `critical`.
    public var impact: String
    /// What the rule asks for.
    public var help: String
    /// The elements that break it, as CSS selectors.
    public var elements: [String]

    public var description: String { "\(rule) (\(impact)): \(help) \u{2014} \(elements.joined(separator: ", "))" }
}
