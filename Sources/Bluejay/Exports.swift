// `import Bluejay` is all an app needs: the value types of the layers below that Bluejay's
// API names come with it. BluetoothCore is the small shared base (addresses, UUIDs, handles,
// the logger, the serial actor), so it comes whole; from the other layers, only the types
// an app meets through this API.
@_exported import BluetoothCore
// The stack's wiring, and the error and identifiers it shares with the faces.
@_exported import class Host.BluetoothHost
@_exported import struct Host.HostResources
@_exported import enum Host.BluejayError
@_exported import struct Host.ServiceIdentifier
@_exported import struct Host.CharacteristicIdentifier
@_exported import struct Host.PeripheralIdentifier
@_exported import typealias Host.TransportOpener
@_exported import struct ATT.ATTErrorCode
@_exported import enum ATT.ATTError
@_exported import struct GATT.Characteristic
@_exported import enum GATT.GATTError
@_exported import struct GATT.Service
@_exported import enum HCI.HCIError
@_exported import struct HCI.HCIStatus
@_exported import enum HCI.TransportError
@_exported import enum SMP.IOCapability
@_exported import protocol SMP.PairingDelegate
@_exported import struct SMP.PairingPolicy
@_exported import struct Storage.StoreDirectory
// The peripheral role (PeripheralManager): what an app declares and meets.
@_exported import struct ATT.AttributePermissions
@_exported import enum ATT.LinkSecurity
@_exported import struct GATT.CharacteristicProperties
@_exported import struct GATT.MutableDescriptor
@_exported import struct GATT.ServedService
@_exported import struct GATT.ServedCharacteristic
@_exported import struct GATT.GATTReadRequest
@_exported import struct GATT.GATTWriteRequest
@_exported import struct GATT.GATTSubscription
@_exported import struct GATT.GATTAuthorizationRequest
@_exported import struct GATT.BondedClientRecord
@_exported import enum Storage.StoreError
@_exported import class GATT.GATTServer
@_exported import enum GATT.GATTServerError
@_exported import class GAP.Advertiser
@_exported import enum GAP.AdvertisingKind
@_exported import struct GAP.AdvertisingParameters
@_exported import enum GAP.AdvertisingResumption
@_exported import enum GAP.AdvertisingError
@_exported import enum GAP.OwnAddress
@_exported import struct HCI.LEConnectionRequest
@_exported import enum L2CAP.CreditBasedChannelError
@_exported import enum SMP.SMPError
@_exported import enum SMP.PairingMethod
