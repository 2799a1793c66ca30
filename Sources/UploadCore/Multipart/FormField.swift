/// A text field sent before the file part, as `-F name=value` gives it.
public struct FormField: Sendable, Hashable, Codable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// Parses `name=value`; the value may itself contain `=`.
    public init(parsing argument: String) throws(UploadInputError) {
        guard let eq = argument.firstIndex(of: "="), eq != argument.startIndex else {
            throw .badFormField(argument)
        }
        self.init(name: String(argument[..<eq]), value: String(argument[argument.index(after: eq)...]))
    }
}
