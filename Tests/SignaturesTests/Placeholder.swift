import Testing

@Test func placeholder_SignaturesTests() {}
