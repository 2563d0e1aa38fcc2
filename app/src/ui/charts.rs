//! Plots drawn as inline SVG, with no script and no plotting library: a line plot with several
//! series, a legend, axes, ticks and optional error bars; a bar chart with a cumulative-share
//! line on a second axis; and a shaded matrix table (confusion matrices, overlaps). Every
//! mark carries its values in an SVG `<title>` (shown on hover). The components only place the
//! numbers they are given: axis ranges and ticks are the only arithmetic here.

use leptos::prelude::*;

/// One point of a series: `y ± sd` at `x`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    /// Drawn as an error bar when present and above 0.
    pub sd: Option<f64>,
}

/// A named series of points.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<Point>,
}

/// Series colours (Okabe–Ito, safe for colour-blind readers); markers and dashes tell the
/// series apart in grey print too.
const COLOURS: [&str; 7] = [
    "#0072b2",
    "#d55e00",
    "#009e73",
    "#cc79a7",
    "#e69f00",
    "#56b4e9",
    "currentColor",
];
const DASHES: [&str; 4] = ["", "6 3", "2 3", "8 3 2 3"];

fn colour(i: usize) -> &'static str {
    COLOURS[i % COLOURS.len()]
}

fn dash(i: usize) -> &'static str {
    DASHES[(i / COLOURS.len() + i) % DASHES.len()]
}

/// An SVG path of marker `i` (circle, square, triangle, diamond, cross, …) of radius `r`.
fn marker_path(i: usize, cx: f64, cy: f64, r: f64) -> String {
    match i % 5 {
        0 => format!(
            "M{:.1},{cy:.1}a{r},{r} 0 1,0 {:.1},0a{r},{r} 0 1,0 {:.1},0Z",
            cx - r,
            2.0 * r,
            -2.0 * r
        ),
        1 => format!(
            "M{:.1},{:.1}h{:.1}v{:.1}h{:.1}Z",
            cx - r,
            cy - r,
            2.0 * r,
            2.0 * r,
            -2.0 * r
        ),
        2 => format!(
            "M{cx:.1},{:.1}L{:.1},{:.1}L{:.1},{:.1}Z",
            cy - 1.2 * r,
            cx + 1.1 * r,
            cy + 0.8 * r,
            cx - 1.1 * r,
            cy + 0.8 * r
        ),
        3 => format!(
            "M{cx:.1},{:.1}L{:.1},{cy:.1}L{cx:.1},{:.1}L{:.1},{cy:.1}Z",
            cy - 1.3 * r,
            cx + 1.3 * r,
            cy + 1.3 * r,
            cx - 1.3 * r
        ),
        _ => format!(
            "M{:.1},{:.1}L{:.1},{:.1}M{:.1},{:.1}L{:.1},{:.1}",
            cx - r,
            cy - r,
            cx + r,
            cy + r,
            cx - r,
            cy + r,
            cx + r,
            cy - r
        ),
    }
}

/// Axis ticks: "nice" values (1, 2 or 5 times a power of ten apart) covering `lo..=hi`.
#[derive(Clone, Debug, PartialEq)]
pub struct Ticks {
    pub lo: f64,
    pub hi: f64,
    pub step: f64,
    pub values: Vec<f64>,
}

/// About `target` nice ticks covering `lo..=hi` (an empty or flat range is widened).
pub fn nice_ticks(lo: f64, hi: f64, target: usize) -> Ticks {
    let (mut lo, mut hi) = if lo.is_finite() && hi.is_finite() && lo <= hi {
        (lo, hi)
    } else {
        (0.0, 1.0)
    };
    if hi - lo < 1e-12 {
        let pad = if lo.abs() > 1e-12 {
            lo.abs() * 0.1
        } else {
            1.0
        };
        lo -= if lo >= 0.0 && lo - pad < 0.0 { lo } else { pad };
        hi += pad;
    }
    let raw = (hi - lo) / target.max(1) as f64;
    let power = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * power)
        .find(|s| *s >= raw * 0.999)
        .unwrap_or(10.0 * power);
    let first = (lo / step).floor();
    let last = (hi / step).ceil();
    let values: Vec<f64> = (0..=((last - first) as usize))
        .map(|k| (first + k as f64) * step)
        .map(|v| if v.abs() < step * 1e-9 { 0.0 } else { v })
        .collect();
    Ticks {
        lo: first * step,
        hi: last * step,
        step,
        values,
    }
}

/// Ticks at whole numbers only (for counts): unchanged when already a whole step apart.
pub fn whole_ticks(ticks: Ticks) -> Ticks {
    if ticks.step >= 1.0 {
        return ticks;
    }
    let (lo, hi) = (
        ticks.lo.floor(),
        ticks.hi.ceil().max(ticks.lo.floor() + 1.0),
    );
    let mut whole = nice_ticks(lo, hi, (hi - lo) as usize);
    whole.step = whole.step.max(1.0);
    whole.values.retain(|v| v.fract() == 0.0);
    whole
}

/// A tick label: as many decimals as the step needs.
pub fn tick_label(value: f64, step: f64) -> String {
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10()).ceil().clamp(0.0, 6.0) as usize
    };
    format!("{value:.decimals$}")
}

/// A value for a hover title: up to 4 decimals, trailing zeros dropped.
pub fn show(value: f64) -> String {
    let text = format!("{value:.4}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".to_owned()
    } else {
        text.to_owned()
    }
}

/// Maps data coordinates to the SVG's.
#[derive(Clone, Copy)]
struct Frame {
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
    x_lo: f64,
    x_hi: f64,
    y_lo: f64,
    y_hi: f64,
}

impl Frame {
    fn x(&self, x: f64) -> f64 {
        self.left + (x - self.x_lo) / (self.x_hi - self.x_lo) * (self.right - self.left)
    }
    fn y(&self, y: f64) -> f64 {
        self.bottom - (y - self.y_lo) / (self.y_hi - self.y_lo) * (self.bottom - self.top)
    }
}

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 300.0;
const LEFT: f64 = 62.0;
const PLOT_RIGHT: f64 = 540.0;
const TOP: f64 = 14.0;
const BOTTOM: f64 = 250.0;

/// Whether `xs` holds at least two different values.
fn has_two_x_values(mut xs: impl Iterator<Item = f64>) -> bool {
    let Some(first) = xs.next() else {
        return false;
    };
    xs.any(|x| x != first)
}

/// Shortens a legend name to `max` characters (the full name is in its title).
fn short(name: &str, max: usize) -> String {
    if name.chars().count() <= max {
        name.to_owned()
    } else {
        let mut s: String = name.chars().take(max - 1).collect();
        s.push('…');
        s
    }
}

/// A line plot of `series` against a numeric x axis, with error bars where points have a
/// standard deviation. `y_from_zero` starts the y axis at 0; `x_integer` keeps x ticks whole.
#[component]
pub fn LinePlot(
    /// What the plot shows (the SVG's accessible name).
    title: String,
    x_label: String,
    y_label: String,
    series: Vec<Series>,
    #[prop(optional)] y_from_zero: bool,
    #[prop(optional)] x_integer: bool,
    /// Keeps y ticks whole (counts).
    #[prop(optional)]
    y_integer: bool,
    /// `data-testid` of the SVG.
    testid: &'static str,
    /// What the plot will show and when: said instead of a degenerate plot, one with fewer than
    /// two x values (a line needs two points).
    empty: String,
) -> AnyView {
    let points = || series.iter().flat_map(|s| s.points.iter());
    if !has_two_x_values(points().map(|p| p.x)) {
        return view! { <p class="plot-empty" data-empty-plot=testid>{empty}</p> }.into_any();
    }
    let (mut x_lo, mut x_hi) = (f64::INFINITY, f64::NEG_INFINITY);
    let (mut y_lo, mut y_hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for p in points() {
        let sd = p.sd.unwrap_or(0.0);
        x_lo = x_lo.min(p.x);
        x_hi = x_hi.max(p.x);
        y_lo = y_lo.min(p.y - sd);
        y_hi = y_hi.max(p.y + sd);
    }
    if y_from_zero {
        y_lo = y_lo.min(0.0);
    }
    let mut xt = nice_ticks(x_lo, x_hi, 8);
    if x_integer {
        xt = whole_ticks(xt);
    }
    let mut yt = nice_ticks(y_lo, y_hi, 5);
    if y_integer {
        yt = whole_ticks(yt);
    }
    let frame = Frame {
        left: LEFT,
        right: PLOT_RIGHT,
        top: TOP,
        bottom: BOTTOM,
        x_lo: xt.lo,
        x_hi: xt.hi,
        y_lo: yt.lo,
        y_hi: yt.hi,
    };
    let count = series.len();
    let dodge = move |i: usize| {
        if count > 1 {
            (i as f64 - (count as f64 - 1.0) / 2.0) * 3.0
        } else {
            0.0
        }
    };
    let x_name = x_label.clone();
    let y_name = y_label.clone();
    let lines = series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let path: String = s
                .points
                .iter()
                .map(|p| format!("{:.1},{:.1}", frame.x(p.x) + dodge(i), frame.y(p.y)))
                .collect::<Vec<_>>()
                .join(" ");
            let marks = s
                .points
                .iter()
                .map(|p| {
                    let cx = frame.x(p.x) + dodge(i);
                    let cy = frame.y(p.y);
                    let sd_text = p.sd.map(|sd| format!(" ± {}", show(sd))).unwrap_or_default();
                    let hover = format!(
                        "{}: {} {}, {} {}{}",
                        s.name,
                        x_name,
                        show(p.x),
                        y_name,
                        show(p.y),
                        sd_text
                    );
                    let bar = p.sd.filter(|sd| *sd > 0.0).map(|sd| {
                        let (y1, y2) = (frame.y(p.y - sd), frame.y(p.y + sd));
                        format!(
                            "M{cx:.1},{y1:.1}V{y2:.1}M{:.1},{y1:.1}h6M{:.1},{y2:.1}h6",
                            cx - 3.0,
                            cx - 3.0
                        )
                    });
                    view! {
                        <g class="mark">
                            {bar.map(|d| view! { <path d=d class="errorbar" stroke=colour(i) /> })}
                            <path d=marker_path(i, cx, cy, 3.5) fill=colour(i) stroke=colour(i) class="marker">
                                <title>{hover}</title>
                            </path>
                        </g>
                    }
                })
                .collect_view();
            view! {
                <g class="series">
                    <polyline points=path fill="none" stroke=colour(i) stroke-width="1.8" stroke-dasharray=dash(i) />
                    {marks}
                </g>
            }
        })
        .collect_view();
    let legend = series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let y = TOP + 8.0 + 18.0 * i as f64;
            let x = PLOT_RIGHT + 20.0;
            view! {
                <g class="legend-entry">
                    <title>{s.name.clone()}</title>
                    <line x1=x y1=y x2=x + 24.0 y2=y stroke=colour(i) stroke-width="1.8" stroke-dasharray=dash(i) />
                    <path d=marker_path(i, x + 12.0, y, 3.5) fill=colour(i) stroke=colour(i) />
                    <text x=x + 30.0 y=y + 4.0>{short(&s.name, 20)}</text>
                </g>
            }
        })
        .collect_view();
    view! {
        <svg class="plot" viewBox=format!("0 0 {WIDTH} {HEIGHT}") role="img" aria-label=title.clone() data-testid=testid>
            <title>{title.clone()}</title>
            <Axes frame=frame xt=xt yt=yt x_label=x_label y_label=y_label />
            {lines}
            {legend}
        </svg>
    }
    .into_any()
}

/// Grid lines, ticks, tick labels and axis labels.
#[component]
fn Axes(frame: Frame, xt: Ticks, yt: Ticks, x_label: String, y_label: String) -> AnyView {
    let y_ticks = yt
        .values
        .iter()
        .map(|&v| {
            let y = frame.y(v);
            view! {
                <g class="tick">
                    <line x1=frame.left y1=y x2=frame.right y2=y class="grid" />
                    <line x1=frame.left - 4.0 y1=y x2=frame.left y2=y class="axis" />
                    <text x=frame.left - 7.0 y=y + 4.0 text-anchor="end">{tick_label(v, yt.step)}</text>
                </g>
            }
        })
        .collect_view();
    let x_ticks = xt
        .values
        .iter()
        .map(|&v| {
            let x = frame.x(v);
            view! {
                <g class="tick">
                    <line x1=x y1=frame.bottom x2=x y2=frame.bottom + 4.0 class="axis" />
                    <text x=x y=frame.bottom + 17.0 text-anchor="middle">{tick_label(v, xt.step)}</text>
                </g>
            }
        })
        .collect_view();
    let mid_x = (frame.left + frame.right) / 2.0;
    let mid_y = (frame.top + frame.bottom) / 2.0;
    view! {
        <g class="axes">
            {y_ticks}
            {x_ticks}
            <line x1=frame.left y1=frame.bottom x2=frame.right y2=frame.bottom class="axis" />
            <line x1=frame.left y1=frame.top x2=frame.left y2=frame.bottom class="axis" />
            <text x=mid_x y=frame.bottom + 38.0 text-anchor="middle" class="axis-label">{x_label}</text>
            <text x=16.0 y=mid_y text-anchor="middle" class="axis-label" transform=format!("rotate(-90 16 {mid_y})")>{y_label}</text>
        </g>
    }
    .into_any()
}

/// A bar chart of `bars` (category label, value) on the left axis, with an optional line of
/// shares (0 to 1, one per bar) on a right axis in percent.
#[component]
pub fn BarChart(
    title: String,
    x_label: String,
    y_label: String,
    bars: Vec<(String, f64)>,
    /// (name, one share per bar)
    #[prop(optional)]
    share_line: Option<(String, Vec<f64>)>,
    testid: &'static str,
) -> AnyView {
    let max = bars.iter().map(|b| b.1).fold(0.0, f64::max);
    let yt = nice_ticks(0.0, max.max(1.0), 5);
    let n = bars.len().max(1);
    let band = (PLOT_RIGHT - LEFT) / n as f64;
    let frame = Frame {
        left: LEFT,
        right: PLOT_RIGHT,
        top: TOP,
        bottom: BOTTOM,
        x_lo: 0.0,
        x_hi: n as f64,
        y_lo: yt.lo,
        y_hi: yt.hi,
    };
    let label_every = n.div_ceil(24);
    let x_name = x_label.clone();
    let y_name = y_label.clone();
    let rects = bars
        .iter()
        .enumerate()
        .map(|(i, (label, value))| {
            let x = LEFT + band * i as f64 + band * 0.15;
            let y = frame.y(*value);
            let hover = format!("{x_name} {label}: {y_name} {}", show(*value));
            let text = (i % label_every == 0).then(|| {
                view! {
                    <text x=LEFT + band * (i as f64 + 0.5) y=BOTTOM + 17.0 text-anchor="middle">{label.clone()}</text>
                }
            });
            view! {
                <g class="bar">
                    <rect x=x y=y width=band * 0.7 height=(BOTTOM - y).max(0.0) fill=colour(0)>
                        <title>{hover}</title>
                    </rect>
                    {text}
                </g>
            }
        })
        .collect_view();
    let share = share_line.map(|(name, shares)| {
        let sy = |s: f64| BOTTOM - s * (BOTTOM - TOP);
        let points: String = shares
            .iter()
            .enumerate()
            .map(|(i, &s)| format!("{:.1},{:.1}", LEFT + band * (i as f64 + 0.5), sy(s)))
            .collect::<Vec<_>>()
            .join(" ");
        let marks = shares
            .iter()
            .zip(&bars)
            .enumerate()
            .map(|(i, (&s, (label, _)))| {
                let hover = format!("{name} at {label}: {}%", show(100.0 * s));
                view! {
                    <path d=marker_path(1, LEFT + band * (i as f64 + 0.5), sy(s), 3.0) fill=colour(1) stroke=colour(1)>
                        <title>{hover}</title>
                    </path>
                }
            })
            .collect_view();
        let ticks = [0.0, 0.25, 0.5, 0.75, 1.0]
            .into_iter()
            .map(|s| {
                view! {
                    <g class="tick">
                        <line x1=PLOT_RIGHT y1=sy(s) x2=PLOT_RIGHT + 4.0 y2=sy(s) class="axis" />
                        <text x=PLOT_RIGHT + 7.0 y=sy(s) + 4.0>{format!("{}%", 100.0 * s)}</text>
                    </g>
                }
            })
            .collect_view();
        let lx = PLOT_RIGHT + 52.0;
        view! {
            <g class="share">
                <line x1=PLOT_RIGHT y1=TOP x2=PLOT_RIGHT y2=BOTTOM class="axis" />
                {ticks}
                <polyline points=points fill="none" stroke=colour(1) stroke-width="1.8" stroke-dasharray=dash(1) />
                {marks}
                <g class="legend-entry">
                    <line x1=lx y1=TOP + 8.0 x2=lx + 24.0 y2=TOP + 8.0 stroke=colour(1) stroke-width="1.8" stroke-dasharray=dash(1) />
                    <text x=lx + 30.0 y=TOP + 12.0>{short(&name, 18)}</text>
                </g>
                <g class="legend-entry">
                    <rect x=lx y=TOP + 22.0 width="24" height="10" fill=colour(0) />
                    <text x=lx + 30.0 y=TOP + 31.0>{short(&y_label, 18)}</text>
                </g>
            </g>
        }
    });
    let x_ticks = Ticks {
        lo: 0.0,
        hi: n as f64,
        step: 1.0,
        values: Vec::new(),
    };
    view! {
        <svg class="plot" viewBox=format!("0 0 {WIDTH} {HEIGHT}") role="img" aria-label=title.clone() data-testid=testid>
            <title>{title.clone()}</title>
            <Axes frame=frame xt=x_ticks yt=yt x_label=x_label y_label=y_label.clone() />
            {rects}
            {share}
        </svg>
    }
    .into_any()
}

/// A matrix as a table with each cell shaded by its value (the largest darkest): confusion
/// matrices and overlaps. `None` cells show a dash.
#[component]
pub fn MatrixTable(
    caption: String,
    /// Header of the row names' column, e.g. "gold \ predicted".
    corner: String,
    rows: Vec<String>,
    columns: Vec<String>,
    values: Vec<Vec<Option<f64>>>,
    /// Formats a cell's value.
    format: fn(f64) -> String,
    testid: String,
) -> AnyView {
    let max = values
        .iter()
        .flatten()
        .flatten()
        .fold(0.0_f64, |m, &v| m.max(v));
    let header = columns
        .iter()
        .map(|c| view! { <th class="num">{c.clone()}</th> })
        .collect_view();
    let body = rows
        .iter()
        .zip(values)
        .map(|(row, cells)| {
            let cells = cells
                .into_iter()
                .zip(&columns)
                .map(|(cell, column)| match cell {
                    Some(v) => {
                        let alpha = if max > 0.0 { 0.08 + 0.5 * v / max } else { 0.0 };
                        let style = format!("background: rgba(31, 95, 168, {alpha:.3})");
                        let hover = format!("{row} / {column}: {}", format(v));
                        view! { <td class="num cell" style=style title=hover>{format(v)}</td> }
                            .into_any()
                    }
                    None => view! { <td class="num cell muted">"–"</td> }.into_any(),
                })
                .collect_view();
            view! { <tr><th>{row.clone()}</th>{cells}</tr> }
        })
        .collect_view();
    view! {
        <table class="grid compact matrix" data-testid=testid>
            <caption>{caption}</caption>
            <thead><tr><th>{corner}</th>{header}</tr></thead>
            <tbody>{body}</tbody>
        </table>
    }
    .into_any()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_needs_two_x_values() {
        assert!(!has_two_x_values([].into_iter()));
        assert!(!has_two_x_values([30.0].into_iter()));
        assert!(!has_two_x_values([30.0, 30.0, 30.0].into_iter()));
        assert!(has_two_x_values([25.0, 30.0].into_iter()));
        assert!(has_two_x_values([1.0, 1.0, 2.0].into_iter()));
    }

    #[test]
    fn ticks_are_nice_and_cover_the_range() {
        let t = nice_ticks(25.0, 250.0, 8);
        assert_eq!(t.step, 50.0);
        assert_eq!((t.lo, t.hi), (0.0, 250.0));
        assert_eq!(t.values, vec![0.0, 50.0, 100.0, 150.0, 200.0, 250.0]);
        let t = nice_ticks(0.0, 0.83, 5);
        assert_eq!(t.step, 0.2);
        assert_eq!(t.hi, 1.0);
        assert!(t.lo <= 0.0 && t.values.len() == 6);
        let flat = nice_ticks(3.0, 3.0, 5);
        assert!(flat.lo <= 3.0 && flat.hi > 3.0);
        let zero = nice_ticks(0.0, 0.0, 5);
        assert!(zero.lo <= 0.0 && zero.hi >= 1.0);
        let nan = nice_ticks(f64::NAN, 1.0, 5);
        assert_eq!((nan.lo, nan.hi), (0.0, 1.0));
        // Whole ticks for counts: one system gives 0, 1, 2; five give 1 to 5.
        let one = whole_ticks(nice_ticks(1.0, 1.0, 8));
        assert_eq!(one.values, vec![0.0, 1.0, 2.0]);
        let five = whole_ticks(nice_ticks(1.0, 5.0, 8));
        assert_eq!(five.values, vec![1.0, 2.0, 3.0, 4.0, 5.0]);
        let zero = whole_ticks(nice_ticks(0.0, 0.0, 5));
        assert_eq!(zero.values, vec![0.0, 1.0]);
        let wide = nice_ticks(0.0, 250.0, 8);
        assert_eq!(whole_ticks(wide.clone()), wide);
    }

    #[test]
    fn labels_and_hover_values() {
        assert_eq!(tick_label(0.4, 0.2), "0.4");
        assert_eq!(tick_label(0.05, 0.05), "0.05");
        assert_eq!(tick_label(150.0, 50.0), "150");
        assert_eq!(show(0.5), "0.5");
        assert_eq!(show(2.0), "2");
        assert_eq!(show(1.0 / 3.0), "0.3333");
        assert_eq!(show(-0.00001), "0");
        assert_eq!(short("a-very-long-system-name-here", 10), "a-very-lo…");
    }

    #[test]
    fn frames_map_data_to_the_plot_area() {
        let f = Frame {
            left: 10.0,
            right: 110.0,
            top: 0.0,
            bottom: 100.0,
            x_lo: 0.0,
            x_hi: 10.0,
            y_lo: 0.0,
            y_hi: 1.0,
        };
        assert_eq!(f.x(5.0), 60.0);
        assert_eq!(f.y(0.25), 75.0);
    }
}
