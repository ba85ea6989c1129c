import Testing

@Test func placeholder_TicketFormatsTests() {}
