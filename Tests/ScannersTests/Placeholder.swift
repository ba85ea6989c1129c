import Testing

@Test func scannersPlaceholder() {}
