import Testing

@Test func placeholder_SymbolsTests() {}
