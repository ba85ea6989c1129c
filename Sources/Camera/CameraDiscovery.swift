import DeviceSettings
import Foundation

/// The cameras attached: every `video` node under the device directory that captures video by streaming, with the
/// modes it offers (as libv4l2 offers them, converted formats included). Nodes that are not capture devices (a
/// camera's metadata node, a codec) are left out; nodes that cannot be opened are listed with the reason.
public enum CameraDiscovery {
    /// One video node.
    public struct Found: Sendable, Hashable {
        /// The node, e.g. `/dev/video0`.
        public var node: String
        /// The driver's name for the camera, when it could be opened.
        public var name: String?
        /// The modes offered near the default request, fastest first within a size.
        public var modes: [CameraMode]
        /// Why the node could not be opened (busy, no permission), or `nil`.
        public var problem: String?
    }

    /// The capture nodes under `deviceRoot`, sorted by number.
    public static func discover(deviceRoot: String = "/dev", request: CameraRequest = CameraRequest()) -> [Found] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: deviceRoot)) ?? []
        let nodes = names.compactMap { name -> (Int, String)? in
            guard name.hasPrefix("video"), let number = Int(name.dropFirst(5)) else { return nil }
            return (number, deviceRoot + "/" + name)
        }.sorted { $0.0 < $1.0 }.map(\.1)
        var found: [Found] = []
        for node in nodes {
            do throws(CameraError) {
                let camera = try V4L2Camera(path: node)
                defer { camera.close() }
                let modes = try camera.modes(near: request).sorted {
                    ($0.pixelFormat.description, -$0.width * $0.height, -$0.framesPerSecond)
                        < ($1.pixelFormat.description, -$1.width * $1.height, -$1.framesPerSecond)
                }
                found.append(Found(node: node, name: camera.name, modes: modes, problem: nil))
            } catch  where error.kind == .notACamera {
                continue
            } catch {
                found.append(Found(node: node, name: nil, modes: [], problem: error.message))
            }
        }
        return found
    }
}
