"""What the text report draws: a chart only once there is something to chart."""

from pipelines.engine.report import chart


def test_one_or_two_runs_make_no_chart_but_say_how_many_there_are() -> None:
    assert chart([]) == "(a chart from 3 runs on; 0 so far)"
    assert chart([4.0, 2.0]) == "(a chart from 3 runs on; 2 so far)"


def test_three_runs_make_a_sparkline_scaled_to_the_highest() -> None:
    assert chart([0.0, 4.0, 8.0]) == "`▁▄█`"
