package ui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/headroom-planner/headroom/app"
	"github.com/headroom-planner/headroom/planner"
)

// auto is the label of every "let Headroom choose" option.
const auto = "Automatic"

// thisMachine is the hardware option for the probed machine.
const thisMachine = "This machine"

// modelPicker chooses a model: a search box over the catalog, a list of
// matches, and a button that opens a GGUF file or config.json.
type modelPicker struct {
	models  []planner.Model
	shown   []int // indexes into models that match the search
	cursor  int   // the list line chosen last (-1 = none since the search)
	search  *entry
	list    *widget.List
	open    *widget.Button
	remote  *widget.Button // "Read … from Hugging Face / Ollama", when the search names one
	current *widget.Label

	model planner.Model
	// onChanged is called on the UI thread when the model changes.
	onChanged func(planner.Model)
	// onOpenFile is called when the user asks to open a model file.
	onOpenFile func()
	// onOpenRef is called with a model reference the catalog lacks
	// (ORG/NAME on the Hugging Face Hub, hf.co/ORG/NAME:QUANT,
	// ollama:NAME:TAG) when the user asks to read it.
	onOpenRef func(ref string)

	content fyne.CanvasObject
}

func newModelPicker(models []planner.Model, listHeight float32) *modelPicker {
	p := &modelPicker{models: models}
	p.search = newEntry()
	p.search.SetPlaceHolder(fmt.Sprintf("Search %d models…", len(models)))
	p.search.OnChanged = p.filter
	p.search.onKey = p.key
	p.list = widget.NewList(
		func() int { return len(p.shown) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("meta-llama/Llama-3.1-70B-Instruct")
			l.Truncation = fyne.TextTruncateEllipsis
			return l
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if i < len(p.shown) {
				o.(*widget.Label).SetText(modelLabel(p.models[p.shown[i]]))
			}
		},
	)
	p.list.OnSelected = func(i widget.ListItemID) {
		p.cursor = i
		if i < len(p.shown) {
			p.choose(p.models[p.shown[i]])
		}
	}
	p.open = widget.NewButtonWithIcon("Open GGUF or config.json…", theme.FolderOpenIcon(), func() {
		if p.onOpenFile != nil {
			p.onOpenFile()
		}
	})
	p.remote = widget.NewButtonWithIcon("", theme.DownloadIcon(), func() {
		if ref := strings.TrimSpace(p.search.Text); ref != "" && p.onOpenRef != nil {
			p.onOpenRef(ref)
		}
	})
	p.remote.Hide()
	p.current = widget.NewLabelWithStyle("No model chosen", fyne.TextAlignLeading, fyne.TextStyle{Italic: true})
	p.current.Truncation = fyne.TextTruncateEllipsis
	p.filter("")
	p.content = container.NewBorder(
		container.NewVBox(p.current, p.search),
		container.NewVBox(p.remote, p.open), nil, nil,
		sized(p.list, fyne.NewSize(200, listHeight)),
	)
	return p
}

// modelLabel is a list line: the model's id and size.
func modelLabel(m planner.Model) string {
	id := m.ID
	if id == "" {
		id = m.Name
	}
	if m.Params > 0 {
		return id + "  ·  " + m.Params.String()
	}
	return id
}

// filter keeps the models whose id or name contains every word of q.
func (p *modelPicker) filter(q string) {
	words := strings.Fields(strings.ToLower(q))
	p.shown = p.shown[:0]
	for i, m := range p.models {
		hay := strings.ToLower(m.ID + " " + m.Name + " " + m.Arch)
		ok := true
		for _, w := range words {
			if !strings.Contains(hay, w) {
				ok = false
				break
			}
		}
		if ok {
			p.shown = append(p.shown, i)
		}
	}
	p.cursor = -1
	p.showRemote(q)
	p.list.UnselectAll()
	p.list.Refresh()
	// A new search shows its first matches, not the old scroll position.
	p.list.ScrollToTop()
}

// showRemote offers to read q from the Hugging Face Hub or the Ollama
// registry when it has the form of a reference there and is not a
// catalog id: the model field takes what `headroom fit -m` takes.
func (p *modelPicker) showRemote(q string) {
	q = strings.TrimSpace(q)
	where := remoteSource(q)
	for _, m := range p.models {
		if strings.EqualFold(m.ID, q) {
			where = ""
		}
	}
	if where == "" {
		p.remote.Hide()
		return
	}
	p.remote.SetText("Read " + q + " from " + where)
	p.remote.Show()
}

// remoteSource names where a reference would be read from ("" = it is
// not a remote reference).
func remoteSource(q string) string {
	l := strings.ToLower(q)
	switch {
	case q == "" || strings.ContainsAny(q, " \t"):
		return ""
	case strings.HasPrefix(l, "ollama:"):
		return "the Ollama registry"
	case strings.HasPrefix(l, "hf.co/"), strings.HasPrefix(l, "huggingface.co/"), strings.HasPrefix(l, "https://huggingface.co/"):
		return "Hugging Face"
	case strings.Count(q, "/") == 1 && !strings.HasPrefix(q, "/") && !strings.HasSuffix(q, "/"):
		return "Hugging Face"
	case strings.Count(q, ":") == 1 && !strings.Contains(q, "/"):
		return "the Ollama registry"
	}
	return ""
}

// key lets the search field choose from the list: Down and Up move to the
// next or previous match and choose it, Enter chooses the first match
// when none is chosen yet. It reports whether it handled the key.
func (p *modelPicker) key(ev *fyne.KeyEvent) bool {
	if len(p.shown) == 0 {
		if (ev.Name == fyne.KeyReturn || ev.Name == fyne.KeyEnter) && p.remote.Visible() && p.onOpenRef != nil {
			p.onOpenRef(strings.TrimSpace(p.search.Text))
			return true
		}
		return false
	}
	var next int
	switch ev.Name {
	case fyne.KeyDown:
		next = min(p.cursor+1, len(p.shown)-1)
	case fyne.KeyUp:
		next = max(p.cursor-1, 0)
	case fyne.KeyReturn, fyne.KeyEnter:
		next = max(p.cursor, 0)
	default:
		return false
	}
	p.list.Select(next)
	p.list.ScrollTo(next)
	return true
}

// choose makes m the current model and tells the screen.
func (p *modelPicker) choose(m planner.Model) {
	if m.ID == p.model.ID && m.Params == p.model.Params && m.FileQuant == p.model.FileQuant {
		return
	}
	p.model = m
	p.showCurrent()
	if p.onChanged != nil {
		p.onChanged(m)
	}
}

// openFile reads a model file with svc off the UI thread and chooses it;
// an error goes to errLine.
func (p *modelPicker) openFile(svc Service, path string, j *job, errLine errorLabel) {
	// A remote model takes seconds to read (its headers, by range): say so.
	p.current.SetText("Reading " + path + "…")
	p.current.TextStyle = fyne.TextStyle{Italic: true}
	p.current.Refresh()
	j.now(func() func() {
		m, err := svc.OpenModelFile(path)
		return func() {
			if err != nil {
				p.showCurrent()
				errLine.set(fmt.Errorf("opening %s: %w", path, err))
				return
			}
			errLine.set(nil)
			p.choose(m)
		}
	})
}

// set makes m the current model without telling the screen.
func (p *modelPicker) set(m planner.Model) {
	p.model = m
	p.showCurrent()
}

func (p *modelPicker) showCurrent() {
	m := p.model
	if m.ID == "" && m.Name == "" {
		p.current.SetText("No model chosen")
		p.current.TextStyle = fyne.TextStyle{Italic: true}
		p.current.Refresh()
		return
	}
	text := modelLabel(m)
	if m.FileQuant != "" {
		text += "  ·  file, " + m.FileQuant
		if m.CheckpointKV != "" {
			text += ", KV cache " + m.CheckpointKV + " (the checkpoint's)"
		}
	}
	p.current.SetText(text)
	p.current.TextStyle = fyne.TextStyle{Bold: true}
	p.current.Refresh()
}

// selectChoice is a Select over labelled ids, with "Automatic" first when
// withAuto is set (its id is "").
type selectChoice struct {
	sel    *choiceSelect
	ids    []string
	labels []string
}

func newSelectChoice(withAuto bool, ids, labels []string, changed func()) *selectChoice {
	c := &selectChoice{}
	c.sel = newChoiceSelect(nil, func(string) {
		if changed != nil {
			changed()
		}
	})
	c.setOptions(withAuto, ids, labels)
	return c
}

// setOptions replaces the options, keeping the selection when it is still
// offered and falling back to the first option otherwise.
func (c *selectChoice) setOptions(withAuto bool, ids, labels []string) {
	prev := c.id()
	c.ids, c.labels = nil, nil
	if withAuto {
		c.ids, c.labels = append(c.ids, ""), append(c.labels, auto)
	}
	c.ids = append(c.ids, ids...)
	c.labels = append(c.labels, labels...)
	c.sel.Options = c.labels
	c.sel.Refresh()
	cb := c.sel.OnChanged
	c.sel.OnChanged = nil
	c.setID(prev)
	c.sel.OnChanged = cb
}

// id returns the chosen option's id ("" = automatic or none).
func (c *selectChoice) id() string {
	i := c.sel.SelectedIndex()
	if i < 0 || i >= len(c.ids) {
		return ""
	}
	return c.ids[i]
}

// setID selects the option with id (the first option if none has it).
func (c *selectChoice) setID(id string) {
	for i, x := range c.ids {
		if x == id {
			c.sel.SetSelectedIndex(i)
			return
		}
	}
	if len(c.ids) > 0 {
		c.sel.SetSelectedIndex(0)
	}
}

// catalogChoices lists hardware, engines, formats and KV types of a catalog
// as ids and labels.
func hardwareChoices(c *planner.Catalog) (ids, labels []string) {
	for _, h := range c.Hardware {
		ids = append(ids, h.ID)
		labels = append(labels, hardwareLabel(h))
	}
	return ids, labels
}

func engineChoices(c *planner.Catalog) (ids, labels []string) {
	for _, e := range c.Engines {
		ids = append(ids, string(e.ID))
		name := e.Name
		if name == "" {
			name = string(e.ID)
		}
		labels = append(labels, name)
	}
	return ids, labels
}

func quantChoices(c *planner.Catalog) (ids, labels []string) {
	for _, q := range c.Quants {
		ids = append(ids, q.ID)
		labels = append(labels, q.ID)
	}
	return ids, labels
}

func kvChoices(c *planner.Catalog) (ids, labels []string) {
	for _, k := range c.KVTypes {
		ids = append(ids, k.ID)
		labels = append(labels, k.ID)
	}
	return ids, labels
}

// hardwareSelect offers this machine first, then the catalog.
// hardwarePicker is the device select with a search above it: typing
// names, memory or price bounds ("24gb", ">=48gb", "<$2000", "nvidia")
// narrows the select's options (app.HardwareQuery). "This machine" and the
// device chosen stay offered whatever the search.
type hardwarePicker struct {
	*selectChoice
	find *entry
	hw   []planner.Hardware
}

func newHardwareSelect(c *planner.Catalog, changed func()) *hardwarePicker {
	ids, labels := hardwareChoices(c)
	ids = append([]string{""}, ids...)
	labels = append([]string{thisMachine}, labels...)
	p := &hardwarePicker{selectChoice: newSelectChoice(false, ids, labels, changed), hw: c.Hardware}
	p.find = newEntry()
	p.find.SetPlaceHolder("name, >=48gb, <$2000")
	p.find.OnChanged = p.filter
	return p
}

// filter offers the devices that answer query q.
func (p *hardwarePicker) filter(q string) {
	hq := app.ParseHardwareQuery(q)
	chosen := p.id()
	ids, labels := []string{""}, []string{p.labels[0]}
	for _, h := range p.hw {
		l := hardwareLabel(h)
		if h.ID == chosen || hq.Matches(h, l) {
			ids, labels = append(ids, h.ID), append(labels, l)
		}
	}
	p.setOptions(false, ids, labels)
}

// setMachineName relabels the "This machine" option with what was probed.
func (c *selectChoice) setMachineName(name string) {
	if len(c.labels) == 0 || c.ids[0] != "" {
		return
	}
	label := thisMachine
	if name != "" {
		label = thisMachine + " (" + name + ")"
	}
	sel := c.sel.SelectedIndex()
	c.labels[0] = label
	c.sel.Options = c.labels
	if sel == 0 {
		cb := c.sel.OnChanged
		c.sel.OnChanged = nil
		c.sel.SetSelectedIndex(0)
		c.sel.OnChanged = cb
	}
	c.sel.Refresh()
}
