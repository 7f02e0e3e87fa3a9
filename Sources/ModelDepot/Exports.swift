// `import ModelDepot` is all an app writes: the layers below are part of its API. OCI registries (pushing and
// pulling ModelPack artifacts) are a product of their own: an app that uses them imports ModelDepotOCI.
@_exported import ModelDepotCache
@_exported import ModelDepotCore
@_exported import ModelDepotHub
@_exported import ModelDepotTransfer
@_exported import ModelDepotTrust
