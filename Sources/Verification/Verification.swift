// Verification
