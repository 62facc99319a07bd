# A Tcl/Tk application run by `wish` (Tk's own shell) whose main loop stalls:
# a label is refreshed from after() timers every 50 ms, then a "recalculate"
# callback computes for SECONDS on the main thread.
#   wish tk_recalculate.tcl SECONDS     (DISPLAY must name an X server)
# Prints {"pid": ..., "tid": ...} first.
set seconds [lindex $argv 0]
label .l -text 0 -width 30
button .b -text recalculate
pack .l .b
set ticks 0
puts "{\"pid\": [pid], \"tid\": [pid]}"
flush stdout
proc tick {} {
    global ticks
    incr ticks
    .l configure -text $ticks
    after 50 tick
}
proc recalculate {} {
    global seconds
    set end [expr {[clock milliseconds] + int($seconds * 1000)}]
    set total 0
    while {[clock milliseconds] < $end} {
        for {set i 0} {$i < 2000} {incr i} { incr total [expr {$i * $i}] }
    }
    .l configure -text $total
}
after 50 tick
after 1500 recalculate
after [expr {int((1.5 + $seconds + 1.5) * 1000)}] exit
