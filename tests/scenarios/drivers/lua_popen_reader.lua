-- A Lua 5.4 program reads, through io.popen, the output of a producer that
-- computes SECONDS of CPU time before it writes (a report generator, a
-- converter): the main thread's read() of the pipe is the hang.  The shell
-- io.popen runs prints its pid and execs the producer, so the pid is the
-- producer's.  Prints {"pid", "tid", "child"} before the long read.
--   lua5.4 lua_popen_reader.lua SECONDS
local seconds = tonumber(arg[1] or "3")
local stat = io.open("/proc/self/stat")
local pid = stat:read("n")
stat:close()
local producer = string.format(
  "echo $$; exec lua5.4 -e 'local t, n = os.clock(), 0 while os.clock() - t < %g do n = n + 1 end print(n)'",
  seconds)
local pipe = assert(io.popen(producer, "r"))
local child = pipe:read("l")
io.stdout:write(string.format('{"pid": %d, "tid": %d, "child": %s}\n', pid, pid, child))
io.stdout:flush()
local result = pipe:read("a")
local ok = pipe:close()
io.stdout:write(string.format('{"result": "%s", "ok": %s}\n', result:gsub("%s+$", ""), tostring(ok)))
