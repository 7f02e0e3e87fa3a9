// `import ModelDepot` is all an app writes: the layers below are part of its API.
@_exported import ModelDepotCache
@_exported import ModelDepotCore
@_exported import ModelDepotHub
@_exported import ModelDepotOCI
@_exported import ModelDepotTransfer
@_exported import ModelDepotTrust
