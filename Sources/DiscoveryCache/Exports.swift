// The store directory moved to its own module (bonds live there too); code that imports
// DiscoveryCache for it keeps compiling.
@_exported import Storage
