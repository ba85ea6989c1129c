import DaemonConfig
import FuzzSupport

/// Fuzzes the daemon's configuration: TOML text through `DaemonConfiguration.parse` (`TOMLReader`, then the
/// strict checks of every table). No file is read: the paths a configuration names are only resolved at start.
@_cdecl("fuzz_config_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc, argv, fuzz)
}

/// One input: parse it; a `ConfigurationError` is the expected outcome, crashes, traps and hangs are the findings.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    // A configuration file is text: `DaemonConfiguration.load` decodes its bytes the same way.
    let text = String(decoding: fuzzInput(start, count), as: UTF8.self)
    if let configuration = try? DaemonConfiguration.parse(text) {
        _ = configuration.httpAddress
    }
    return 0
}
