import Foundation
import UploadCore

/// `send DIR`: a folder named among the files stands for the images in it (in its subfolders
/// too with `-r`), by name order, as rclone sends a folder; `--include`/`--exclude` globs choose
/// among them (rclone's habit: a pattern without `/` matches a file's name anywhere, one with
/// `/` its path under the folder; excludes win). Hidden files and folders are passed over, and
/// without `--any-file` so is every file whose name is not an image's. Files named on their own
/// are taken as named.
public struct FolderFiles: Sendable, Equatable {
    public var recursive = false
    public var include: [String] = []
    public var exclude: [String] = []
    public var anyFile = false

    public init(recursive: Bool = false, include: [String] = [], exclude: [String] = [], anyFile: Bool = false) {
        (self.recursive, self.include, self.exclude, self.anyFile) = (recursive, include, exclude, anyFile)
    }

    /// What a folder held for a send: its files, and a note for the user (nil when nothing
    /// needs saying).
    public struct Expansion: Sendable, Equatable {
        public var files: [String]
        public var notes: [String]
    }

    /// Names that are images', by their extension (lower case).
    static let imageExtensions: Set<String> = [
        "jpg", "jpeg", "jpe", "jfif", "png", "gif", "webp", "heic", "heif", "hif", "avif", "tif", "tiff", "bmp", "dng", "cr2", "cr3", "nef", "arw", "orf",
        "rw2", "raf",
    ]

    /// The operands with every folder replaced by its files.
    public func expand(_ operands: [String]) -> Expansion {
        var files: [String] = []
        var notes: [String] = []
        for operand in operands {
            var isDirectory: ObjCBool = false
            guard operand != "-", FileManager.default.fileExists(atPath: operand, isDirectory: &isDirectory), isDirectory.boolValue else {
                files.append(operand)
                continue
            }
            let root = operand.hasSuffix("/") && operand.count > 1 ? String(operand.dropLast()) : operand
            var found: [String] = []
            var skippedFolders = 0
            var unreadable: [(String, String)] = []
            walk(root, relative: "", into: &found, skippedFolders: &skippedFolders, unreadable: &unreadable)
            files += found
            if found.isEmpty {
                notes.append(
                    "\(operand): no \(anyFile ? "file" : "image") to send in it\(skippedFolders > 0 ? " (\(skippedFolders) subfolder(s) not searched: -r searches them)" : "")"
                )
            }
            for (folder, reason) in unreadable { notes.append("\(folder): cannot read the folder (\(reason)); its files were not sent") }
        }
        return Expansion(files: files, notes: notes)
    }

    private func walk(_ folder: String, relative: String, into found: inout [String], skippedFolders: inout Int, unreadable: inout [(String, String)]) {
        guard let directory = opendir(folder) else {
            unreadable.append((folder, String(cString: strerror(errno))))
            return
        }
        closedir(directory)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else {
            unreadable.append((folder, "its entries could not be listed"))
            return
        }
        for name in names.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) where !name.hasPrefix(".") {
            let path = folder + "/" + name
            let inFolder = relative.isEmpty ? name : relative + "/" + name
            var st = stat()
            guard stat(path, &st) == 0 else { continue }
            if st.st_mode & S_IFMT == S_IFDIR {
                if recursive {
                    walk(path, relative: inFolder, into: &found, skippedFolders: &skippedFolders, unreadable: &unreadable)
                } else {
                    skippedFolders += 1
                }
                continue
            }
            guard st.st_mode & S_IFMT == S_IFREG, chosen(name: name, path: inFolder) else { continue }
            found.append(path)
        }
    }

    /// Whether a file of the folder goes: an image's name (or any, with `--any-file`), matched
    /// by an include when there are any, by no exclude.
    public func chosen(name: String, path: String) -> Bool {
        if !anyFile {
            let ext = (name as NSString).pathExtension.lowercased()
            guard Self.imageExtensions.contains(ext) else { return false }
        }
        if !include.isEmpty, !include.contains(where: { Self.matches($0, name: name, path: path) }) { return false }
        return !exclude.contains { Self.matches($0, name: name, path: path) }
    }

    /// rclone's reading of a pattern: with a `/`, the path under the folder (a leading `/`
    /// anchors it there); without, the name at any depth. `*` stays within a name, `**` crosses
    /// folders.
    public static func matches(_ pattern: String, name: String, path: String) -> Bool {
        guard pattern.contains("/") else { return glob(pattern, name) }
        let anchored = pattern.hasPrefix("/") ? String(pattern.dropFirst()) : pattern
        if glob(anchored, path) { return true }
        // Unanchored: the pattern may match the path's tail at any folder.
        guard !pattern.hasPrefix("/") else { return false }
        var parts = path.split(separator: "/").map(String.init)
        while parts.count > 1 {
            parts.removeFirst()
            if glob(anchored, parts.joined(separator: "/")) { return true }
        }
        return false
    }

    /// fnmatch with `**` for any run of folders.
    static func glob(_ pattern: String, _ text: String) -> Bool {
        if pattern.contains("**") {
            // `**` as `*` without FNM_PATHNAME: crosses `/`.
            return fnmatch(pattern.replacingOccurrences(of: "**", with: "*"), text, 0) == 0
        }
        return fnmatch(pattern, text, FNM_PATHNAME) == 0
    }
}
