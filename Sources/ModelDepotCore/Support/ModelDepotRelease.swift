/// The release this build belongs to: what `modeldepot --version` prints and what a bill of materials names as its
/// tool.
package enum ModelDepotRelease {
    package static let version = "0.1.0"
}
