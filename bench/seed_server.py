# The upload server of the first seed article (server.py), unchanged: bench/throughput runs it
# under uvicorn as the baseline receiver.
from fastapi import FastAPI, File, UploadFile

app = FastAPI()


@app.post('/photo')
async def uploadPhoto(photo: UploadFile = File(...)):
    filename = str(photo.filename)
    photo_data = await photo.read()
    with open(f"./{filename}", mode="wb") as f:
        f.write(photo_data)
    return {"filename": filename}
