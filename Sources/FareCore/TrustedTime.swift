import Foundation

/// Where a trusted time came from: evidence that the real time has reached at least that instant.
public enum TrustedTimeSource: String, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// The day this farecheck release was made (`FarecheckRelease.date`): no device running it is earlier.
    case release = "release"
    /// The signing time of a key bundle the validator accepted (signed by a pinned anchor).
    case keyBundle = "key-bundle"
    /// The signing time of a revocation delta the validator accepted (signed by a pinned anchor).
    case revocations = "revocations"
    /// The `Date` of a successful reply of the validation API to this device's authenticated request.
    case serverReply = "server-reply"
    /// The newest inspection in the journal: this device's own clock, at a time it was not doubted.
    case journal = "journal"

    /// What the source is, for the inspector and the log.
    public var description: String {
        switch self {
        case .release: "the date of this farecheck release"
        case .keyBundle: "the signing time of an accepted key bundle"
        case .revocations: "the signing time of an accepted revocation list"
        case .serverReply: "the time of a reply from the validation server"
        case .journal: "the newest inspection in the journal"
        }
    }
}

/// The trusted-time floor: the latest instant the real time is known to have reached, and where that is known
/// from.
///
/// A device whose clock reads earlier than the floor (beyond a tolerance) has a clock that is wrong — an RTC
/// reset to 1970 or 2000 at boot, a clock set by hand — so any verdict that depends on the instant would be
/// wrong with full confidence. The floor only ever moves forward (`raised(to:)`); see `doubt(of:tolerance:)`.
public struct TrustedTimeFloor: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The instant the real time is known to have reached.
    public var instant: Date
    /// Where that is known from.
    public var source: TrustedTimeSource

    /// Makes a floor.
    public init(instant: Date, source: TrustedTimeSource) {
        self.instant = instant
        self.source = source
    }

    /// The floor of the release itself: the lowest any device running this farecheck can have.
    public static var release: TrustedTimeFloor { TrustedTimeFloor(instant: FarecheckRelease.date, source: .release) }

    /// The later of this floor and `other` (this one when they are equal): a floor never goes back.
    public func raised(to other: TrustedTimeFloor?) -> TrustedTimeFloor {
        guard let other, other.instant > instant else { return self }
        return other
    }

    /// The doubt about `wallClock`, when it reads earlier than this floor by more than `tolerance` seconds;
    /// `nil` when the clock can be trusted.
    public func doubt(of wallClock: Date, tolerance: TimeInterval) -> ClockDoubt? {
        guard wallClock < instant.addingTimeInterval(-max(0, tolerance)) else { return nil }
        return ClockDoubt(wallClock: wallClock, floor: self)
    }

    public var description: String { "\(instant.formatted(.iso8601)) (\(source))" }
}

/// A device clock that reads earlier than the trusted-time floor beyond the tolerance: validity cannot be judged.
public struct ClockDoubt: Sendable, Hashable {
    /// What the device clock read.
    public var wallClock: Date
    /// The floor it is earlier than.
    public var floor: TrustedTimeFloor

    /// Makes a doubt.
    public init(wallClock: Date, floor: TrustedTimeFloor) {
        self.wallClock = wallClock
        self.floor = floor
    }

    /// How far the clock reads behind the floor, in seconds.
    public var behind: TimeInterval { floor.instant.timeIntervalSince(wallClock) }

    /// The sentence for the inspector and the log: what the clock reads, what it is earlier than, what to do.
    public var reason: Explanation {
        "The device clock reads \(date: wallClock), earlier than the last trusted time "
            + "\(date: floor.instant) (\(floor.source)); set the clock (NTP) — validity cannot be judged."
    }
}

/// This farecheck release.
public enum FarecheckRelease {
    /// The day this release was made, 00:00 UTC: the trusted-time floor of every device running it.
    ///
    /// A source constant rather than a build-time stamp: SwiftPM has no build date without a plugin, and a stamp
    /// would make builds differ from run to run. It must never lie in the future of any device that runs this
    /// build (that would refuse every verdict), so the test `ReleaseDateTests` holds it to the git history: not
    /// later than the commit that last changed this file, and not older than 180 days before the newest commit.
    /// Bump it when making a release.
    public static let date = Date(timeIntervalSince1970: 1_795_564_800)  // 2026-11-25T00:00:00Z
}
