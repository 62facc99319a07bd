from argus.tracer import input_event


def test_a_core_key_press_as_the_hook_records_it():
    # bytes 0-7 of a real core KeyPress (code 2, keycode 65, sequence 0xf8, time 0x0156be7b)
    assert input_event.fields(0x0156be7b00f84102) == {"kind": "key_press", "detail": 65,
                                                      "x_time_ms": 0x0156be7b, "synthetic": False}


def test_release_button_and_synthetic():
    assert input_event.fields(0x4103)["kind"] == "key_release"
    f = input_event.fields(0x0184)
    assert (f["kind"], f["detail"], f["synthetic"]) == ("button_press", 1, True)
    assert input_event.describe(0x0000000500000305) == "button_release button 3 x_time=5ms"
    assert input_event.fields(0x09)["kind"] == "9"     # not an input code: shown as the number
