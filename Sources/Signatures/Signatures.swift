// Signatures
