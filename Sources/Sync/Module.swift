// The Sync module; see Package.swift.
