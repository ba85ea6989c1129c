/// Accepting a sub-CA when several roots are pinned, as `farecheck keys import --vdv`, `farecheck-server keys
/// add --format vdv` and a key bundle's VDV certificates all need it.
extension VDVCertificateImport {
    /// Accepts a sub-CA certificate under the first of `roots` it chains to (see `subCA(_:root:trustUnsigned:)`).
    ///
    /// - Parameters:
    ///   - bytes: The certificate file or LDAP value (`7F21 …`).
    ///   - roots: The pinned roots it may chain to; tried in order.
    ///   - trustUnsigned: Whether a bare body without a signature may be accepted (it must still name its root).
    ///   - rootlessIfUnsigned: Whether, with no root at all and `trustUnsigned`, a bare body is accepted as it
    ///     is (the operator vouches for it; it is then usable only where its root is pinned).
    /// - Throws: `VDVImportError`: the reason the last root refused it, or that there is no root to check under.
    public static func subCA(
        _ bytes: [UInt8], underAnyOf roots: [VDVAuthority], trustUnsigned: Bool, rootlessIfUnsigned: Bool
    ) throws(VDVImportError) -> VDVAuthority {
        if roots.isEmpty {
            guard trustUnsigned, rootlessIfUnsigned else {
                throw VDVImportError("no VDV root is pinned to check the certificate under; pin its root first")
            }
            return try subCA(bytes, root: nil, trustUnsigned: true)
        }
        var refusal = VDVImportError("no VDV root is pinned to check the certificate under; pin its root first")
        for root in roots {
            do {
                return try subCA(bytes, root: root, trustUnsigned: trustUnsigned)
            } catch {
                refusal = error
            }
        }
        throw refusal
    }
}
