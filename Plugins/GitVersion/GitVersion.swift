import Foundation
import PackagePlugin

/// Stamps the build with its version from git: `scripts/version-stamp.sh` writes `GitVersion.swift` into the
/// plugin's work directory before every build (rewriting it only when the version changed).
@main
struct GitVersion: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let generated = context.pluginWorkDirectoryURL.appending(path: "Generated")
        let script = context.package.directoryURL.appending(path: "scripts/version-stamp.sh")
        return [
            .prebuildCommand(
                displayName: "farecheck version from git", executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: [script.path, generated.path], outputFilesDirectory: generated)
        ]
    }
}
