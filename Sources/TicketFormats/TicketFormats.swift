// TicketFormats
