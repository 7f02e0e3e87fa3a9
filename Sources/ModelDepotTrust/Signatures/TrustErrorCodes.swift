import ModelDepotCore

extension ModelDepotError.Code {
    /// A model's signature is missing where one is required, cannot be read, was made by another key, or does not
    /// match the model's files. The message says which.
    public static let signatureInvalid = Self("signatureInvalid", category: .integrity)
    /// A file's format can run code when it is loaded (Python pickle), and the policy refuses such files.
    public static let unsafeFormat = Self("unsafeFormat", category: .integrity)
}
