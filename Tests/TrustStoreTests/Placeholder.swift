import Testing

@Test func placeholder_TrustStoreTests() {}
