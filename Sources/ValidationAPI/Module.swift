// The ValidationAPI module; see Package.swift.
