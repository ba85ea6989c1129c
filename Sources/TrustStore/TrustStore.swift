// TrustStore
