// The ValidationServer module; see Package.swift.
