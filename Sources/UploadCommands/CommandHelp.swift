/// The commands' longer help (their discussions), kept out of the executable, which only
/// declares and wires the commands.
public enum CommandHelp {
    public static let agent = """
        The monitor and 'send --background' start the agent by themselves when none runs; you \
        rarely start it by hand. It keeps a journal in $XDG_STATE_HOME/uploadmon (default \
        ~/.local/state/uploadmon), listens on a socket only your user may use, picks up unfinished \
        uploads after a crash, and exits after being idle (no uploads, no clients) for a while. \
        `uploadmon agent config` sets how many uploads it runs at once and a total rate limit.
        """

    public static let agent2 = """
        Writes uploadmon-agent.socket and uploadmon-agent.service to ~/.config/systemd/user \
        ($XDG_CONFIG_HOME), enables and starts them. Where there is no systemd user instance \
        (containers, shells without a login session), it says so and changes nothing; the agent \
        then keeps starting on demand as before.
        """

    public static let agentConfig = """
        Without options, shows the settings. With options, changes them, stores them next to the \
        journal, and puts them in force in a running agent at once (uploads already sending go \
        on; the rate applies from their next write). Every later start of the agent reads them, \
        whoever starts it: the monitor, `send --background`, or `agent run`.

        The rate limit is for all the agent's uploads together; an upload's own --limit-rate \
        still applies to it as well.

        Examples:
          uploadmon agent config
          uploadmon agent config --concurrency 4
          uploadmon agent config --limit-rate 2MB --between 09:00-18:00
            (at most 2 MB/s in working hours, full speed otherwise)
          uploadmon agent config --limit-rate 500k --between 22:00-06:00
            (a window that runs over midnight)
          uploadmon agent config --all-day        (the limit at every hour)
          uploadmon agent config --limit-rate none  (full speed again)
        """

    public static let jobs = """
        Jobs run inside the agent, each not before its next-run time and never more often than its \
        interval; a job that came due while the agent was not running runs once when it starts. \
        Maintenance (daily by default) prunes finished uploads and events older than a week, removes \
        leftover temporary files, rotates a large agent log and vacuums the journal when worthwhile.

        Examples:
          uploadmon jobs
          uploadmon jobs run 2
          uploadmon jobs remove ~/Pictures/incoming
          uploadmon jobs maintenance --every 12h --keep 30d
        """

    public static let status = """
        Reads the journal directly, so it works whether or not the agent runs. Header values are \
        never shown.

        Examples:
          uploadmon status
          uploadmon status --json | jq '.uploads[] | select(.state == "failed")'
        """

    public static let watch = """
        The agent (started when none runs) looks at the folder every --every, not in its subfolders. \
        A file is queued once its size and modification time stayed the same over two looks in a \
        row, so a file still being copied or downloaded is never sent half-written; hidden files \
        and names like *.part, *.crdownload, *.tmp or *~ are never looked at. Each file is queued \
        once: a file that changes after it was queued is not sent again (a file that leaves the \
        folder is forgotten, so a new one under the same name is new). Without --new-only, the \
        files already in the folder are sent too.

        While a folder is watched the agent does not exit when idle. Watching the same folder again \
        updates its settings. List jobs with `uploadmon jobs`, look now with `uploadmon jobs run ID`, \
        stop watching with `uploadmon jobs remove ID` (or the folder).

        Examples:
          uploadmon watch ~/Pictures/incoming --to http://127.0.0.1:3000/photo
          uploadmon watch /srv/camera --to https://host/photo --every 30s --new-only \\
              -H 'Authorization: Bearer …'
        """

    public static let demo = """
        Everything happens on 127.0.0.1 on a free port: the receiver runs with --images-only and \
        stops when you quit. The samples include a ~200 MB PNG (its bar fills over several seconds), \
        one with a Japanese name, and a text file named notes.jpg that the receiver refuses with \
        415, so a red panel shows too. Mark files with Space (or * for all), press u, watch. \
        Samples are generated once and reused; received files go to a new folder each run.
        """

    public static let destinations = """
        A destination is a URL (or s3://bucket/prefix/) with the sending options that go with it, \
        kept in $XDG_CONFIG_HOME/uploadmon/destinations.toml (~/.config/…), a TOML file you may \
        edit by hand. `--to NAME` in send, watch and the monitor uses it; options on the command \
        line win over its own. The default destination is used when --to is not given. \
        No secrets are kept in it: logins come from ~/.netrc (--netrc), the environment, or a \
        header file (-H @FILE, kept as its path).

        Examples:
          uploadmon destinations add blog --to https://blog.example.com/photo --field file \\
              -H @~/.config/uploadmon/blog.headers --strip-location --default
          uploadmon destinations check blog
          uploadmon send *.jpg --to blog

        More: Docs/destinations.md in the source tree.
        """

    public static let destinations2 = """
        `check NAME` (or the default destination, or --to URL with options): an OPTIONS request \
        with the headers an upload carries (a tus or resumable server says what it speaks), or \
        for s3:// a signed HEAD of the bucket. Exit 0 when it answered as an upload endpoint \
        would, 1 when it refused (credentials, no such path), 2 when nothing answered.
        """

    public static let monitor = """
        Opens the monitor in DIR (default: the current directory). Mark images with Space, queue \
        them with u, watch the bars, and read the server's answer in the response panel: green for \
        2xx, red for anything else. Press ? inside for every key.

        Examples:
          uploadmon ~/Pictures --to http://127.0.0.1:3000/photo
          uploadmon . --to https://example.com/upload --field file \\
              -H 'Authorization: Bearer …'
          uploadmon --to http://host/photo --notify osc
            (desktop notifications, through SSH too)

        More: Docs/monitor.md (every key, the mouse, previews) in the source tree.
        """

    public static let presign = """
        The credentials, region and endpoint are read as for send --to s3:// (AWS_ACCESS_KEY_ID and \
        AWS_SECRET_ACCESS_KEY, else AWS_PROFILE in ~/.aws; AWS_REGION; AWS_ENDPOINT_URL). Whoever \
        holds the URL can upload that one object until it expires, without the credentials: hand \
        it to a demo's client, or use it here with send FILE --put --to URL.

        Examples:
          uploadmon presign s3://photos/2026/cat.jpg --expires 1h
          curl -T cat.jpg "$(uploadmon presign s3://photos/cat.jpg)"
        """

    public static let send = """
        Each file is sent as multipart/form-data: the -F text fields first, then the file in --field; \
        to an endpoint that speaks tus 1.0.0 (found by --protocol auto, or --protocol tus) as its raw \
        bytes, the -F fields, name and type in Upload-Metadata, resumed from the server's offset. \
        Only images are sent unless --any-file is given. '-' reads standard input and sends it chunked \
        (by tus: --chunk-size at a time, its length said at its end, where the server takes that).

        Output: on a terminal, one line per file redrawn in place; otherwise one line per event; \
        with --json, one JSON object per event. NO_COLOR turns colour off.

        Ctrl-C cancels the uploads still running or queued (the lines say so) and exits 130; a \
        second Ctrl-C stops at once. SIGTERM does the same as the first Ctrl-C and exits 143.

        A folder among the files sends the images in it (-r: in its subfolders too; --include and \
        --exclude choose among them). A file that cannot be sent (missing, unreadable, not an image) \
        is said and the others go; --strict sends none then.

        Exit status: 0 every upload got a 2xx answer; 1 an answer was not 2xx; 2 an upload got no \
        answer (connection, timeout, file error) or a file was refused and the others sent; 3 every upload got a 2xx answer but one was cut \
        off before its end (--answer-timeout, a closed connection: the file arrived, the answer \
        did not all arrive); 64 bad command line, or every file refused (with --strict: any); 130/143 interrupted.

        Examples:
          uploadmon send cat.jpg --to http://127.0.0.1:3000/photo
          uploadmon send *.png --to https://example.com/upload --field file \\
              -H 'Authorization: Bearer …'
          uploadmon send photo.heic --name holiday --to http://127.0.0.1:3000/photo
            (sent as holiday.heic)
          uploadmon send key.jpg -F key=uploads/key.jpg -F policy=… \\
              --to https://bucket.example.com/
          cat shot.png | uploadmon send - --name shot.png \\
              --to http://127.0.0.1:3000/photo
          uploadmon send *.jpg --to http://host/photo --json --retries 3
          uploadmon send clip.jpg --to https://tus.example.com/files/ --chunk-size 5MiB --retries 5
          uploadmon send clip.jpg --to https://api.example.com/ --upload-url https://up.example.com/u/ab12
          uploadmon send ~/DCIM -r --include '*.jpg' --to https://host/photo --dry-run
          uploadmon send ~/photos/*.jpg --to https://host/photo --background
            (then: uploadmon status)
          find ~/photos -name '*.jpg' -print0 | \\
              uploadmon send --files-from - --null --to https://host/photo --background

        More: Docs/sending.md (folders, globs, PUT, S3, lists, digests) and privacy.md in the source tree.
        """

    public static let serve = """
        Files are streamed to a temporary name in --dir and renamed when complete; an existing name \
        gets a numbered suffix, and an aborted upload leaves nothing behind. Errors are answered as \
        JSON {"error": …}: 400 malformed or missing field, 404 other paths, 405 other methods, \
        413 over --max-size, 415 not multipart/form-data (or not an image with --images-only). \
        One line per request is printed. SIGINT or SIGTERM stops accepting at once, lets uploads in \
        progress finish within --shutdown-grace, then abandons the rest (their partial files removed).

        Uploads are resumable (draft-ietf-httpbis-resumable-upload, interop versions 6, 8, 9 and 10): a \
        POST with Upload-Complete creates an upload resource under /resumable/ (announced with 104 \
        to clients that name an interop version); HEAD gives its offset, PATCH appends, DELETE \
        cancels, OPTIONS says the limits. Partial uploads are kept in --dir/.uploadmon-resumable \
        (never served, never stored as a file until complete), survive a restart, and are removed \
        --resume-max-age after their creation, or --resume-idle after a request last touched them. \
        One client (an IPv4 address, an IPv6 /64) holds at most --resume-per-client unfinished \
        uploads and all clients 4096: a new one then replaces the least recently active one of \
        that client (of the client holding the most, at the total). The complete body is stored \
        as a one-shot upload is; a refused one keeps nothing.

        Examples:
          uploadmon serve
          uploadmon serve --port 8080 --dir /srv/photos --max-size 200MB --images-only
          uploadmon serve --tls-cert cert.pem --tls-key key.pem
            (clients: uploadmon send … --cacert ca.pem)
          curl -F photo=@cat.jpg http://127.0.0.1:3000/photo

        More: Docs/receiver.md in the source tree.
        """

    public static let uploadmon = """
        Start with `uploadmon demo`, or `uploadmon --to URL` in a folder of photos; save where \
        they go with `uploadmon destinations add NAME --to URL`. Guides in the source tree's Docs/: \
        monitor.md, sending.md, destinations.md, resuming.md, agent.md, receiver.md, privacy.md, \
        install.md, benchmarks.md, testing.md.
        """
}
