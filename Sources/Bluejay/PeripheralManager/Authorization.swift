import GATT

extension PeripheralManager {
    /// Asks `authorizer` before a central reads or writes a characteristic or descriptor
    /// declared with `AttributePermissions.readAuthorized` or
    /// `AttributePermissions.writeAuthorized`: true serves the request (the read or
    /// write handler runs, or the stored value is used), false refuses it with Insufficient
    /// Authorization (0x08) and touches nothing. One authorizer for the whole database,
    /// since descriptors need it too; it sees the handle and UUID. Without one, every such
    /// request is refused. The central's later requests wait while it decides.
    public func onAuthorize(_ authorizer: @escaping GATTServer.Authorizer) {
        server.authorizer = authorizer
    }
}
