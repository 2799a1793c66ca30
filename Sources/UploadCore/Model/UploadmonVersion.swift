/// The version uploadmon reports (`--version`, `User-Agent`).
public enum UploadmonVersion {
    public static let current = "0.1.0"
}
