import Foundation

/// Checks an endpoint before any work starts: only `http` and `https` URLs with a host.
public enum EndpointURL {
    public static func validate(_ text: String) throws(UploadInputError) -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased() else {
            throw .badURL(text)
        }
        guard scheme == "http" || scheme == "https" else { throw .unsupportedScheme(url: text) }
        guard let host = url.host, !host.isEmpty else { throw .badURL(text) }
        return url
    }
}
