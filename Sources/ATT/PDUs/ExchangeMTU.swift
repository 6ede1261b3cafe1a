import BluetoothCore

/// ATT_EXCHANGE_MTU_REQ (0x02, Core Vol 3, Part F, 3.4.2.1): the client's receive MTU.
public struct ExchangeMTURequest: ATTPDU {
    /// 0x02.
    public static var opcode: ATTOpcode { .exchangeMTURequest }
    /// The largest ATT PDU the client can receive.
    public var clientRxMTU: UInt16

    /// A request announcing `clientRxMTU`.
    public init(clientRxMTU: UInt16) { self.clientRxMTU = clientRxMTU }

    /// Client_Rx_MTU.
    public static let layout = MessageLayout(
        "Exchange_MTU_Req", Self.init(clientRxMTU:), Field("Client_Rx_MTU", \.clientRxMTU))
}

/// ATT_EXCHANGE_MTU_RSP (0x03, Core Vol 3, Part F, 3.4.2.2): the server's receive MTU.
public struct ExchangeMTUResponse: ATTPDU {
    /// 0x03.
    public static var opcode: ATTOpcode { .exchangeMTUResponse }
    /// The largest ATT PDU the server can receive.
    public var serverRxMTU: UInt16

    /// A response announcing `serverRxMTU`.
    public init(serverRxMTU: UInt16) { self.serverRxMTU = serverRxMTU }

    /// Server_Rx_MTU.
    public static let layout = MessageLayout(
        "Exchange_MTU_Rsp", Self.init(serverRxMTU:), Field("Server_Rx_MTU", \.serverRxMTU))
}
