import DeviceSettings

/// How to open a scanner for each protocol, for ``ScannerReader``'s `open` closure (called again after every
/// unplug, so `auto` finds the scanner anew).
public enum ScannerOpener {
    /// The opener for `device` (a node, or `auto` for the first attached scanner speaking `protocolName`); an SSI
    /// scanner is set to `triggerMode` at every open.
    public static func opener(
        device: String, protocol protocolName: ScannerProtocolName, settings: SerialSettings = SerialSettings(),
        layout: KeyboardLayout = .us, triggerMode: SSITriggerMode = .presentation,
        discovery: ScannerDiscovery = ScannerDiscovery(),
        log: @escaping @Sendable (String) -> Void
    ) -> @Sendable () async throws -> any ScannerConnection {
        let resolve: @Sendable () throws -> String = {
            guard device == "auto" else { return device }
            let found = discovery.discover()
            guard let scanner = found.scanners.first(where: { $0.protocols.contains(protocolName) }) else {
                throw ScannerConnectionError(
                    code: .deviceMissing, device: "auto",
                    message: "no attached scanner speaks \(protocolName.rawValue)"
                        + (found.explanation.map { ": \($0)" } ?? ""))
            }
            return scanner.node
        }
        switch protocolName {
        case .ssi:
            var ssi = SSIConfiguration()
            ssi.serial = settings
            ssi.triggerMode = triggerMode
            let configuration = ssi
            return { try await SSIConnection.open(path: try resolve(), configuration: configuration, log: log) }
        case .raw:
            return { try SerialRawConnection.open(path: try resolve(), settings: settings, log: log) }
        case .hidpos:
            return { try HIDScannerConnection.openHIDRaw(path: try resolve(), protocol: .hidPOS(), log: log) }
        case .snapi:
            return { try HIDScannerConnection.openHIDRaw(path: try resolve(), protocol: .snapi, log: log) }
        case .wedge:
            return { try WedgeConnection.open(path: try resolve(), framer: WedgeFramer(layout: layout), log: log) }
        }
    }
}
