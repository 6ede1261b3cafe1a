import BluetoothCore

/// The permission checks of a request (Core Vol 3, Part F, 3.2.5; Part C, 10.3.1): what an
/// attribute allows, and the security and authorization the request's link has.
extension AttributeServer {
    /// Why `connection` may not read `attribute`: Read Not Permitted, the security its
    /// link lacks (Core Vol 3, Part C, 10.3.1), or Insufficient Authorization; nil if it may.
    public func readRefusal(_ attribute: Attribute, connection: ConnectionHandle) -> AttributeRefusal? {
        guard attribute.permissions.contains(.read) else {
            return Refusal(handle: attribute.handle, code: .readNotPermitted)
        }
        if let refusal = securityRefusal(
            attribute, encrypted: .readEncrypted, authenticated: .readAuthenticated, connection: connection)
        {
            return refusal
        }
        return authorizationRefusal(attribute, needs: .readAuthorized, connection: connection)
    }

    /// Why `connection` may not write `length` octets to the attribute at `handle` with a
    /// request needing `permission`: Invalid Handle, Write Not Permitted, the security its
    /// link lacks, Insufficient Authorization, or a value past 512 octets; nil if it may.
    public func writeRefusal(
        handle: AttributeHandle, length: Int, needs permission: AttributePermissions,
        connection: ConnectionHandle
    ) -> AttributeRefusal? {
        guard let attribute = attribute(at: handle) else { return Refusal(handle: handle, code: .invalidHandle) }
        guard attribute.permissions.contains(permission) else {
            return Refusal(handle: handle, code: .writeNotPermitted)
        }
        if let refusal = securityRefusal(
            attribute, encrypted: .writeEncrypted, authenticated: .writeAuthenticated, connection: connection)
        {
            return refusal
        }
        if let refusal = authorizationRefusal(attribute, needs: .writeAuthorized, connection: connection) {
            return refusal
        }
        guard length <= Self.maximumValueLength else {
            return Refusal(handle: handle, code: .invalidAttributeValueLength)
        }
        return nil
    }

    /// Insufficient Authentication when the attribute needs an authenticated link (or any
    /// encryption, on a link without it), Insufficient Encryption when it needs encryption.
    private func securityRefusal(
        _ attribute: Attribute, encrypted: AttributePermissions, authenticated: AttributePermissions,
        connection: ConnectionHandle
    ) -> AttributeRefusal? {
        guard !attribute.permissions.isDisjoint(with: [encrypted, authenticated]) else { return nil }
        let security = linkSecurity?(connection) ?? .none
        if attribute.permissions.contains(authenticated), security < .authenticated {
            return Refusal(handle: attribute.handle, code: .insufficientAuthentication)
        }
        if attribute.permissions.contains(encrypted), security < .encrypted {
            return Refusal(handle: attribute.handle, code: .insufficientEncryption)
        }
        return nil
    }

    /// Insufficient Authorization (Part F, 3.2.5) when the attribute needs `permission` and
    /// ``isAuthorized`` does not grant this request.
    private func authorizationRefusal(
        _ attribute: Attribute, needs permission: AttributePermissions,
        connection: ConnectionHandle
    ) -> AttributeRefusal? {
        guard attribute.permissions.contains(permission), isAuthorized?(connection, attribute.handle) != true else {
            return nil
        }
        return Refusal(handle: attribute.handle, code: .insufficientAuthorization)
    }
}
