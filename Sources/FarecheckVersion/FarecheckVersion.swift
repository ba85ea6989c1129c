/// The version of farecheck and farecheck-server, as `--version` prints it and the Debian package is named.
///
/// From git, stamped at build time by the GitVersion plugin (`scripts/version-stamp.sh`): the tag (`1.2.0`), or
/// commits after it (`1.2.0+3.g1a2b3c4d5e`), or before any tag the commit's day and hash
/// (`0.0.0+git20261127.1a2b3c4d5e`), with `dirty` appended for uncommitted changes. SwiftPM runs the plugin when it
/// plans a build (a fresh clone, a changed manifest), not on every incremental build: a development build may name
/// an earlier commit until `Package.swift` is touched. `scripts/build-deb.sh` touches it and checks the result.
public enum FarecheckVersion {
    /// The version text.
    public static let text = gitVersion
}
