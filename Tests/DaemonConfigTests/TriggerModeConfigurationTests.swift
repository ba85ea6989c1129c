import DaemonConfig
import DeviceSettings
import TestSupport
import Testing

@Suite("Scanner trigger mode in the configuration")
struct TriggerModeConfigurationTests {
    @Test("trigger_mode is presentation unless set; level and host are taken; the example sets presentation")
    func values() throws {
        let defaults = try DaemonConfiguration.parse("[[scanner]]\ndevice = \"auto\"")
        #expect(defaults.scanners.map(\.triggerMode) == [.presentation])
        for mode in SSITriggerMode.allCases {
            let configuration = try DaemonConfiguration.parse(
                "[[scanner]]\ndevice = \"auto\"\nprotocol = \"ssi\"\ntrigger_mode = \"\(mode.rawValue)\"")
            #expect(configuration.scanners.map(\.triggerMode) == [mode])
        }
        let example = try DaemonConfiguration.load(path: repositoryRoot + "/Config/farecheck.toml")
        #expect(example.scanners.map(\.triggerMode) == [.presentation])
    }

    @Test("an unknown trigger_mode, or one on a scanner that does not speak SSI, is refused with the key")
    func refusals() {
        let cases: [(String, String)] = [
            (
                "[[scanner]]\ndevice = \"auto\"\ntrigger_mode = \"manual\"",
                "scanner[1].trigger_mode: must be \"presentation\", \"level\" or \"host\" (got \"manual\")"
            ),
            (
                "[[scanner]]\ndevice = \"auto\"\nprotocol = \"hidpos\"\ntrigger_mode = \"host\"",
                "scanner[1].trigger_mode: applies to ssi scanners only"
            ),
        ]
        for (text, expected) in cases {
            let error = refusal(of: text)
            #expect(error?.description.contains(expected) == true, "\(String(describing: error))")
        }
    }
}
