import Testing

@Test func placeholder_VerificationTests() {}
