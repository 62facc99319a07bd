"""Generated lldb scripts (argus lldb-script): generate.py writes them from
step_trace.py, the template run by lldb."""
